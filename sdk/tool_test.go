package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentskills/agent/sdk"
	"github.com/agentskills/agent/sdk/sdktest"
)

type addIn struct {
	A int `json:"a" description:"first"`
	B int `json:"b"`
}

type failIn struct {
	Kind string `json:"kind"`
}

func testSkill() sdk.Skill {
	return sdk.NewSkill(
		sdk.NewTool("add", "Add two integers.", func(ctx context.Context, in addIn) (int, error) {
			if in.A < 0 {
				sdk.Note(ctx, "negative a")
			}
			return in.A + in.B, nil
		}),
		sdk.NewTool("fail", "Fail in several ways.", func(ctx context.Context, in failIn) (any, error) {
			switch in.Kind {
			case "structured":
				return nil, sdk.Errorf("not_found", "no such thing")
			case "wrapped":
				return nil, fmt.Errorf("looking: %w", sdk.Errorf("permission_denied", "no"))
			case "canceled":
				c, cancel := context.WithCancel(ctx)
				cancel()
				return nil, c.Err()
			case "notes":
				var wg sync.WaitGroup
				for range 4 {
					wg.Add(1)
					go func() { defer wg.Done(); sdk.Note(ctx, "n") }()
				}
				wg.Wait()
				return "ok", nil
			case "unencodable":
				return func() {}, nil
			}
			return nil, errors.New("plain failure")
		}),
	)
}

func TestSkillInvoke(t *testing.T) {
	t.Parallel()
	c := sdktest.Run(t, testSkill())
	tests := []struct {
		name      string
		tool      string
		args      string
		want      string
		wantNote  string
		wantCode  string
		wantInMsg string
	}{
		{name: "ok", tool: "add", args: `{"a":2,"b":3}`, want: `5`},
		{name: "note", tool: "add", args: `{"a":-2,"b":3}`, want: `1`, wantNote: "negative a"},
		{name: "notes from goroutines", tool: "fail", args: `{"kind":"notes"}`, want: `"ok"`, wantNote: "n; n; n; n"},
		{name: "invalid args name the field", tool: "add", args: `{"a":"x","b":1}`, wantCode: sdk.CodeInvalidArgs, wantInMsg: `add: field "a": expected integer, got string`},
		{name: "missing field", tool: "add", args: `{"a":1}`, wantCode: sdk.CodeInvalidArgs, wantInMsg: `missing required field "b"`},
		{name: "unknown tool", tool: "sub", args: `{}`, wantCode: sdk.CodeUnknownTool, wantInMsg: `"sub"; this skill has: add, fail`},
		{name: "structured error kept", tool: "fail", args: `{"kind":"structured"}`, wantCode: "not_found", wantInMsg: "no such thing"},
		{name: "wrapped structured error", tool: "fail", args: `{"kind":"wrapped"}`, wantCode: "permission_denied"},
		{name: "plain error", tool: "fail", args: `{"kind":"plain"}`, wantCode: sdk.CodeToolFailed, wantInMsg: "fail: plain failure"},
		{name: "context error", tool: "fail", args: `{"kind":"canceled"}`, wantCode: sdk.CodeToolFailed},
		{name: "unencodable result", tool: "fail", args: `{"kind":"unencodable"}`, wantCode: sdk.CodeToolFailed, wantInMsg: "encode result"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Invoke(context.Background(), tc.tool, json.RawMessage(tc.args))
			if tc.wantCode != "" {
				var e *sdk.Error
				if !errors.As(err, &e) {
					t.Fatalf("err = %v (%T), want *sdk.Error", err, err)
				}
				if e.Code != tc.wantCode || !strings.Contains(e.Message, tc.wantInMsg) {
					t.Fatalf("got %v, want %s containing %q", e, tc.wantCode, tc.wantInMsg)
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

func TestDescribeThroughGRPC(t *testing.T) {
	t.Parallel()
	c := sdktest.Run(t, testSkill())
	tools, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Name != "add" || tools[1].Name != "fail" {
		t.Fatalf("tools = %+v", tools)
	}
	want := `{"additionalProperties":false,"properties":{"a":{"description":"first","type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}`
	if string(tools[0].InputSchema) != want {
		t.Errorf("schema %s\nwant   %s", tools[0].InputSchema, want)
	}
}

func TestCallMarshals(t *testing.T) {
	t.Parallel()
	c := sdktest.Run(t, testSkill())
	res, err := c.Call(context.Background(), "add", addIn{A: 1, B: 2})
	if err != nil || string(res.Value) != "3" {
		t.Fatalf("Call = %s, %v", res.Value, err)
	}
}

func TestNoteOutsideACallIsIgnored(t *testing.T) {
	t.Parallel()
	sdk.Note(context.Background(), "nobody listens") // must not panic
}

func TestNewToolAndSkillPanics(t *testing.T) {
	t.Parallel()
	ok := func(context.Context, addIn) (int, error) { return 0, nil }
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{name: "bad tool name", f: func() { sdk.NewTool("has space", "", ok) }, want: "must match"},
		{name: "long tool name", f: func() { sdk.NewTool(strings.Repeat("a", 65), "", ok) }, want: "must match"},
		{name: "nil function", f: func() { sdk.NewTool[addIn, int]("x", "", nil) }, want: "nil function"},
		{name: "input not a struct", f: func() {
			sdk.NewTool("x", "", func(context.Context, string) (int, error) { return 0, nil })
		}, want: "must be a struct"},
		{name: "duplicate tools", f: func() { sdk.NewSkill(sdk.NewTool("x", "", ok), sdk.NewTool("x", "", ok)) }, want: "duplicate"},
		{name: "zero tool", f: func() { sdk.NewSkill(sdk.Tool{}) }, want: "zero Tool"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic = %v, want %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestErrorString(t *testing.T) {
	t.Parallel()
	if got := sdk.Errorf("timeout", "after %ds", 3).Error(); got != "timeout: after 3s" {
		t.Errorf("Error() = %q", got)
	}
}

func TestBlankArgumentsMeanNoArguments(t *testing.T) {
	t.Parallel()
	type none struct{}
	s := sdk.NewSkill(sdk.NewTool("noop", "Nothing.", func(context.Context, none) (string, error) { return "ok", nil }))
	for _, args := range []string{"", "  \n", "{}"} {
		res, err := s.Invoke(context.Background(), "noop", json.RawMessage(args))
		if err != nil || string(res.Value) != `"ok"` {
			t.Errorf("Invoke(%q) = %s, %v", args, res.Value, err)
		}
	}
}
