package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// FuzzNormaliseArgs: any argument bytes are either a JSON object handed on
// as given, or refused with an error that says to send an object; and
// exactly the bytes that decode as an object (or nothing, or null) pass.
func FuzzNormaliseArgs(f *testing.F) {
	for _, seed := range []string{"", "{}", `{"a":1}`, "[1]", "null", "{", " \n{\"x\":[1,2,{}]}\t", `"str"`, "-", `{"a":1}x`, `{"a":1}{}`, "{\"\xff\":1}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := normaliseArgs("tool", raw)
		trimmed := strings.TrimSpace(string(raw))
		var decoded map[string]json.RawMessage
		object := json.Unmarshal([]byte(trimmed), &decoded) == nil && decoded != nil
		if want := trimmed == "" || trimmed == "null" || object; (err == nil) != want {
			t.Fatalf("normaliseArgs(%q) error %v; want accepted %v", raw, err, want)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "must be a JSON object") {
				t.Fatalf("normaliseArgs(%q) error %q does not say what to send", raw, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(got, &obj); err != nil || obj == nil {
			t.Fatalf("normaliseArgs(%q) = %s, not a JSON object", raw, got)
		}
	})
}

func TestDeadlinePolicy(t *testing.T) {
	t.Parallel()
	plugin := &ToolRef{Name: "greet", Skill: "hello", Plugin: "hello"}
	script := &ToolRef{Name: "script_run", Skill: ExecSkill, Plugin: ExecPlugin}
	for _, tc := range []struct {
		name     string
		cfg      Config
		tool     *ToolRef
		override time.Duration
		want     time.Duration
	}{
		{"default floor", Config{}, plugin, 0, DefaultCallFloor},
		{"floor set", Config{CallFloor: time.Second}, plugin, 0, time.Second},
		{"script limit under the floor", Config{ScriptTimeout: time.Minute}, script, 0, DefaultCallFloor},
		{"script limit above the floor", Config{ScriptTimeout: 10 * time.Minute}, script, 0, 10*time.Minute + ScriptGrace},
		{"script limit does not stretch a plugin call", Config{CallFloor: time.Second, ScriptTimeout: time.Minute}, plugin, 0, time.Second},
		{"override wins", Config{ScriptTimeout: 10 * time.Minute}, script, time.Second, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := &Workspace{Config: tc.cfg}
			if got := ws.deadline(tc.tool, tc.override); got != tc.want {
				t.Fatalf("deadline = %s, want %s", got, tc.want)
			}
		})
	}
}

type recorder struct {
	mu     sync.Mutex
	starts []CallEvent
	ends   []string
}

type ctxKey struct{}

func (r *recorder) CallStart(ctx context.Context, ev CallEvent) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts = append(r.starts, ev)
	return context.WithValue(ctx, ctxKey{}, ev.Name)
}

func (r *recorder) CallEnd(ctx context.Context, ev CallEvent, out Outcome) {
	r.mu.Lock()
	defer r.mu.Unlock()
	spanned, _ := ctx.Value(ctxKey{}).(string)
	r.ends = append(r.ends, ev.Name+"/"+ev.Skill+"/"+ev.CallID+"/"+out.Code+"/"+spanned)
}

// TestCallRefusals covers the refusals Call makes before any code runs,
// with the in-process use_skill tool, and the events it gives.
func TestCallRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := &manifest.Manifest{Name: "sub", Description: "A fork skill.", Context: "fork", AllowedTools: []string{"use_skill"}, Body: "Do $0."}
	e := registry.Entry{Name: "sub", Canonical: "sub", Path: dir, Origin: registry.Origin{Source: registry.SourceBundled}}
	rec := &recorder{}
	ws, err := New(Config{Observer: rec}, []registry.Entry{e}, []*ActiveSkill{{Entry: &e, Manifest: m}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, tool, args string
		opts             CallOptions
		wantCode         string
		wantMsg          string
	}{
		{name: "unknown tool", tool: "nope", args: `{}`, wantCode: sdk.CodeUnknownTool, wantMsg: "not a tool of any active or installed skill"},
		{name: "not an object", tool: "use_skill", args: `[1]`, wantCode: sdk.CodeInvalidArgs, wantMsg: "must be a JSON object"},
		{name: "outside allowed-tools", tool: "use_skill", args: `{"skill":"sub"}`, opts: CallOptions{AllowedTools: []string{"read_file"}}, wantCode: CodePermissionDenied, wantMsg: "allowed-tools: read_file"},
		{name: "fork without delegation", tool: "use_skill", args: `{"skill":"sub","args":["it"]}`, opts: CallOptions{CallID: "c1"}, wantMsg: "forked sub-agent"},
		{name: "fork delegated", tool: "use_skill", args: `{"skill":"sub","args":["it"]}`, opts: CallOptions{Delegate: func(_ context.Context, ins Instructions) (sdk.Result, error) {
			return sdk.Result{Value: json.RawMessage(`"ran: ` + ins.Instructions + `"`)}, nil
		}}},
		{name: "delegation fails", tool: "use_skill", args: `{"skill":"sub"}`, opts: CallOptions{Delegate: func(context.Context, Instructions) (sdk.Result, error) {
			return sdk.Result{}, sdk.Errorf("delegated_run_failed", "model gone")
		}}, wantCode: "delegated_run_failed", wantMsg: "model gone"},
		{name: "host error keeps its cause", tool: "use_skill", args: `{"skill":"sub"}`, opts: CallOptions{Delegate: func(context.Context, Instructions) (sdk.Result, error) {
			return sdk.Result{}, errors.New("disk full")
		}}, wantCode: CodeHostError, wantMsg: "disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := ws.Call(ctx, tc.tool, json.RawMessage(tc.args), tc.opts)
			if out.Code != tc.wantCode || !strings.Contains(out.Message, tc.wantMsg) {
				t.Fatalf("Call = %q %q, want %q containing %q", out.Code, out.Message, tc.wantCode, tc.wantMsg)
			}
			if out.OK() && !json.Valid(out.Value) {
				t.Fatalf("value %q is not JSON", out.Value)
			}
			if tc.name == "fork delegated" && string(out.Value) != `"ran: Do it."` {
				t.Fatalf("delegated value = %s", out.Value)
			}
		})
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.starts) != 7 || len(rec.ends) != 7 {
		t.Fatalf("events: %d starts, %d ends; want 7 each", len(rec.starts), len(rec.ends))
	}
	for _, want := range []string{"nope///unknown_tool/nope", "use_skill/agent/c1//use_skill", "use_skill/agent//permission_denied/use_skill"} {
		found := false
		for _, got := range rec.ends {
			found = found || got == want
		}
		if !found {
			t.Errorf("no end event %q in %q", want, rec.ends)
		}
	}
}
