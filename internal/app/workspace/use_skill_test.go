package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

func TestUseSkill(t *testing.T) {
	t.Parallel()
	manifest := func(src string) *manifest.Manifest {
		m, _, err := manifest.ParseManifest("SKILL.md", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	ws := &Workspace{
		All: []registry.Entry{fixtureEntry("demo"), fixtureEntry("fork"), fixtureEntry("manual"), fixtureEntry("idle")},
		Active: []*ActiveSkill{
			{Entry: new(fixtureEntry("demo")), Manifest: manifest("---\nname: demo\ndescription: d\n---\nfirst=$0 all=$ARGUMENTS\n")},
			{Entry: new(fixtureEntry("fork")), Manifest: manifest("---\nname: fork\ndescription: d\ncontext: fork\nagent: Plan\n---\nPlain body.\n")},
			{Entry: new(fixtureEntry("manual")), Manifest: manifest("---\nname: manual\ndescription: d\ndisable-model-invocation: true\n---\nx\n")},
		},
	}
	tests := []struct {
		name     string
		args     string
		wantCode string // "" for success
		wantText string // instructions, or a part of the error message
		wantMsg  string
	}{
		{"list args", `{"skill":"demo","args":["a","b c"]}`, "", "first=a all=a b c\n", ""},
		{"string args", `{"skill":"Demo","args":"a  b"}`, "", "first=a all=a b\n", ""},
		{"name alias", `{"name":"demo","arguments":"z"}`, "", "first=z all=z\n", ""},
		// Placeholders filled with "" read as nonsense: the body as written,
		// and a note that asks for the arguments.
		{"no args", `{"skill":"demo"}`, "", "first=$0 all=$ARGUMENTS\n", "No arguments were given"},
		{"empty args", `{"skill":"demo","args":[]}`, "", "first=$0 all=$ARGUMENTS\n", "call use_skill again with args"},
		{"appended arguments and fork", `{"skill":"fork","args":["q"]}`, "", "Plain body.\n\nARGUMENTS: q\n", "context: fork), agent: Plan"},
		{"empty input", ``, sdk.CodeInvalidArgs, "skill is required", ""},
		{"unknown field", `{"skill":"demo","x":1}`, sdk.CodeInvalidArgs, "unknown field", ""},
		{"bad args type", `{"skill":"demo","args":3}`, sdk.CodeInvalidArgs, "list of strings", ""},
		{"not active", `{"skill":"idle"}`, CodeSkillNotFound, "installed but not active", ""},
		{"unknown", `{"skill":"nope"}`, CodeSkillNotFound, "active skills: demo, fork", ""},
		{"model refused", `{"skill":"manual"}`, CodeModelInvocationRefused, "disable-model-invocation: true", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := useSkill(context.Background(), ws, json.RawMessage(tt.args))
			if tt.wantCode != "" {
				var se *sdk.Error
				if !errors.As(err, &se) || se.Code != tt.wantCode || !strings.Contains(se.Message, tt.wantText) {
					t.Fatalf("err = %v, want code %s with %q", err, tt.wantCode, tt.wantText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var r Instructions
			if err := json.Unmarshal(res.Value, &r); err != nil {
				t.Fatal(err)
			}
			if r.Instructions != tt.wantText {
				t.Errorf("instructions = %q, want %q", r.Instructions, tt.wantText)
			}
			if !strings.Contains(res.Message, tt.wantMsg) {
				t.Errorf("message = %q, want %q", res.Message, tt.wantMsg)
			}
		})
	}
}

func fixtureEntry(name string) registry.Entry {
	return registry.Entry{Name: name, Canonical: name, Trusted: true, Origin: registry.Origin{Source: "git", CommitSHA: strings.Repeat("a", 40)}}
}

// TestUseSkillSchemaPortable: every type in use_skill's input schema is
// one type, not a list of them, which the MCP inspector flags as less
// portable (issue 35); a single string for args is still accepted.
func TestUseSkillSchemaPortable(t *testing.T) {
	t.Parallel()
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if typ, ok := v["type"]; ok {
				if _, one := typ.(string); !one {
					t.Errorf("%s: type %v is not one type", at, typ)
				}
			}
			for k, c := range v {
				walk(at+"/"+k, c)
			}
		case []any:
			for _, c := range v {
				walk(at, c)
			}
		}
	}
	var schema any
	if err := json.Unmarshal(UseSkillInfo.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	walk("use_skill", schema)
}
