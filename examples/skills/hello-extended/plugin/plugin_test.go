package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/sdk"
	"github.com/agentskills/agent/sdk/sdktest"
)

func TestTools(t *testing.T) {
	t.Parallel()
	c := sdktest.Run(t, newSkill())
	tests := []struct {
		name     string
		tool     string
		args     any
		want     string
		wantNote string
		wantCode string
	}{
		{name: "code", tool: "greet_in_language", args: map[string]any{"name": "Ada", "language": "fr"}, want: `{"greeting":"Bonjour, Ada!","language":"fr"}`},
		{name: "english name", tool: "greet_in_language", args: map[string]any{"name": "Ada", "language": "Spanish"}, want: `{"greeting":"Hola, Ada!","language":"es"}`},
		{name: "unicode", tool: "greet_in_language", args: map[string]any{"name": "Ada", "language": "ja"}, want: `{"greeting":"こんにちは, Ada!","language":"ja"}`},
		{name: "unknown language", tool: "greet_in_language", args: map[string]any{"name": "Ada", "language": "klingon"}, wantCode: "unsupported_language"},
		{name: "missing language", tool: "greet_in_language", args: map[string]any{"name": "Ada"}, wantCode: sdk.CodeInvalidArgs},
		{name: "empty name", tool: "greet_in_language", args: map[string]any{"name": " ", "language": "en"}, wantCode: sdk.CodeInvalidArgs},
		{name: "multiple", tool: "greet_multiple", args: map[string]any{"names": []string{"Ada", "Alan"}, "language": "de"}, want: `{"greetings":["Hallo, Ada!","Hallo, Alan!"],"language":"de"}`},
		{name: "multiple default language", tool: "greet_multiple", args: map[string]any{"names": []string{"Ada"}}, want: `{"greetings":["Hello, Ada!"],"language":"en"}`, wantNote: "no language given; used en"},
		{name: "no names", tool: "greet_multiple", args: map[string]any{"names": []string{}}, wantCode: sdk.CodeInvalidArgs},
		{name: "names not strings", tool: "greet_multiple", args: map[string]any{"names": []int{1}}, wantCode: sdk.CodeInvalidArgs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Call(context.Background(), tc.tool, tc.args)
			if tc.wantCode != "" {
				var e *sdk.Error
				if !errors.As(err, &e) || e.Code != tc.wantCode {
					t.Fatalf("err = %v, want code %s", err, tc.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Value) != tc.want || res.Message != tc.wantNote {
				t.Errorf("got %s %q, want %s %q", res.Value, res.Message, tc.want, tc.wantNote)
			}
		})
	}
}

// TestBinary builds the plugin and runs it as the host would, with only
// the environment its SKILL.md allows.
func TestBinary(t *testing.T) {
	t.Parallel()
	c := sdktest.Start(t, sdktest.Build(t, "."), "HELLO_DEFAULT_LANGUAGE=it")
	tools, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Name != "greet_in_language" || tools[1].Name != "greet_multiple" {
		t.Fatalf("tools = %+v", tools)
	}
	var schema struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(tools[1].InputSchema, &schema); err != nil || len(schema.Required) != 1 || schema.Required[0] != "names" {
		t.Errorf("greet_multiple schema %s (%v)", tools[1].InputSchema, err)
	}
	res, err := c.Call(context.Background(), "greet_multiple", map[string]any{"names": []string{"Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `{"greetings":["Ciao, Ada!"],"language":"it"}` {
		t.Errorf("got %s", res.Value)
	}
}

// TestScriptConventions runs scripts/advanced_greeting.py with python3 as
// the exec plugin would without uv: --help works and --json prints only
// JSON.
func TestScriptConventions(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	script := filepath.Join("..", "scripts", "advanced_greeting.py")
	if out, err := exec.Command(py, script, "--help").Output(); err != nil || !strings.Contains(string(out), "usage:") {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	cmd := exec.Command(py, script, "Ada", "--language", "es", "--time-of-day", "evening", "--json", "--verbose")
	cmd.Env = []string{"LANG=C"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var got struct {
		Greetings []string `json:"greetings"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("stdout is not only JSON: %v\n%s", err, out)
	}
	if len(got.Greetings) != 1 || got.Greetings[0] != "Buenas noches, Ada." {
		t.Errorf("greetings = %q", got.Greetings)
	}
}
