package run_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/testutil/fakemodel"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/sdk"
)

// TestMain lets the test binary serve plugins: the script plugin as
// `__plugin exec`, and the tester skill's plugin when RUN_TEST_PLUGIN is
// set (the host runs a skill plugin without arguments).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "__plugin" && os.Args[2] == "exec" {
		os.Exit(exec.Main())
	}
	if os.Getenv("RUN_TEST_PLUGIN") != "" {
		sdk.Serve(testerSkill())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type todoIn struct {
	Add  []string `json:"add,omitempty"`
	Done []string `json:"done,omitempty"`
}

type blockIn struct {
	Marker string `json:"marker"`
}

type meetIn struct {
	N int `json:"n"`
}

// testerSkill stands in for base's todo and attempt_completion, plus tools
// that fail, block, or only succeed when called concurrently.
func testerSkill() sdk.Skill {
	var mu sync.Mutex
	var open []string
	var arrived atomic.Int32
	all := make(chan struct{})
	var closeOnce sync.Once
	return sdk.NewSkill(
		sdk.NewTool("todo", "Add or finish todos.", func(_ context.Context, in todoIn) (map[string][]string, error) {
			mu.Lock()
			defer mu.Unlock()
			open = append(open, in.Add...)
			for _, d := range in.Done {
				for i, o := range open {
					if o == d {
						open = append(open[:i], open[i+1:]...)
						break
					}
				}
			}
			return map[string][]string{"todos": append([]string{}, open...)}, nil
		}),
		sdk.NewTool("attempt_completion", "Finish.", func(_ context.Context, _ struct{}) (map[string]any, error) {
			mu.Lock()
			defer mu.Unlock()
			if len(open) == 0 {
				return map[string]any{}, nil
			}
			return map[string]any{"todos": open}, nil
		}),
		sdk.NewTool("fail", "Always fails.", func(_ context.Context, _ struct{}) (string, error) {
			return "", sdk.Errorf("boom", "it broke on purpose")
		}),
		sdk.NewTool("block", "Blocks until canceled, the first time marker is new.", func(ctx context.Context, in blockIn) (string, error) {
			if _, err := os.Stat(in.Marker); err == nil {
				return "went through", nil
			}
			if err := os.WriteFile(in.Marker, nil, 0o644); err != nil {
				return "", err
			}
			<-ctx.Done()
			return "", ctx.Err()
		}),
		sdk.NewTool("meet", "Returns once n calls are in progress at once.", func(ctx context.Context, in meetIn) (string, error) {
			if arrived.Add(1) >= int32(in.N) {
				closeOnce.Do(func() { close(all) })
			}
			select {
			case <-all:
				return "met", nil
			case <-time.After(20 * time.Second):
				return "", sdk.Errorf("alone", "the other calls never came: calls are not concurrent")
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}),
	)
}

var testerTools = []registry.Tool{
	{Name: "todo", Description: "Add or finish todos.", InputSchema: []byte(`{"type":"object","properties":{"add":{"type":"array","items":{"type":"string"}},"done":{"type":"array","items":{"type":"string"}}}}`)},
	{Name: "attempt_completion", Description: "Finish.", InputSchema: []byte(`{"type":"object"}`)},
	{Name: "fail", Description: "Always fails.", InputSchema: []byte(`{"type":"object"}`)},
	{Name: "block", Description: "Blocks.", InputSchema: []byte(`{"type":"object","properties":{"marker":{"type":"string"}}}`)},
	{Name: "meet", Description: "Meets.", InputSchema: []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
}

// skills are the SKILL.md files of the test workspace.
var skills = map[string]string{
	// tester's block tool writes its marker into a test's temp folder, which
	// plugins may write only when they declare it (they run sandboxed).
	"tester":    "---\nname: tester\ndescription: Test tools.\npermissions:\n  env: [RUN_TEST_PLUGIN]\n  fs:\n    write: [" + os.TempDir() + "]\n---\nUse the tools.\n",
	"greeter":   "---\nname: greeter\ndescription: Greets people.\n---\nSay hello to $0.\n",
	"summarize": "---\nname: summarize\ndescription: Summarizes text in a sub-agent.\ncontext: fork\nallowed-tools: [attempt_completion]\n---\nSummarize $ARGUMENTS in one line.\n",
	"hidden":    "---\nname: hidden\ndescription: Only for the model.\nuser-invocable: false\n---\nHidden body.\n",
	"manual":    "---\nname: manual\ndescription: Only for people.\ndisable-model-invocation: true\n---\nManual body for $0.\n",
}

var testBinary struct {
	once sync.Once
	path string
	sum  string
	err  error
}

func selfSum(t testing.TB) (string, string) {
	t.Helper()
	testBinary.once.Do(func() {
		testBinary.path, testBinary.err = os.Executable()
		if testBinary.err != nil {
			return
		}
		f, err := os.Open(testBinary.path)
		if err != nil {
			testBinary.err = err
			return
		}
		defer f.Close()
		h := sha256.New()
		_, testBinary.err = io.Copy(h, f)
		testBinary.sum = hex.EncodeToString(h.Sum(nil))
	})
	if testBinary.err != nil {
		t.Fatal(testBinary.err)
	}
	return testBinary.path, testBinary.sum
}

// newWorkspace builds a workspace of the test skills, all active. The
// tester skill's plugin is this test binary.
func newWorkspace(t testing.TB) *workspace.Workspace {
	t.Helper()
	home := t.TempDir()
	bin, sum := selfSum(t)
	var all []registry.Entry
	var active []*workspace.ActiveSkill
	for _, name := range []string{"greeter", "hidden", "manual", "summarize", "tester"} {
		dir := filepath.Join(home, "skills", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skills[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		m, _, err := gitsrc.LoadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		e := registry.Entry{Name: name, Canonical: name, Trusted: true, Path: dir, Description: m.Description, Origin: registry.Origin{Source: registry.SourceGit}}
		if name == "tester" {
			e.Plugin = &registry.Plugin{Path: bin, SHA256: sum}
			e.Tools = testerTools
		}
		all = append(all, e)
		active = append(active, &workspace.ActiveSkill{Entry: &e, Manifest: m})
	}
	ws, err := workspace.New(workspace.Config{Home: home, Environ: []string{"RUN_TEST_PLUGIN=1"}}, all, active)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ws.Close)
	return ws
}

// harness is one test's workspace, job store, fake model and events.
type harness struct {
	t     testing.TB
	srv   *fakemodel.Server
	root  string
	opts  run.Options
	mu    sync.Mutex
	evs   []run.Event
	wire  string
	strm  bool
	onEvt func(run.Event)
}

func newHarness(t testing.TB, provider string, stream bool, script ...fakemodel.Reply) *harness {
	t.Helper()
	srv, err := fakemodel.Start(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h := &harness{t: t, srv: srv, root: t.TempDir(), wire: provider, strm: stream}
	h.opts = h.options(newWorkspace(t))
	return h
}

func (h *harness) options(ws *workspace.Workspace) run.Options {
	co := clientOptions(h.srv, h.strm)
	return run.Options{
		Workspace: ws,
		Store:     run.NewStore(h.root),
		NewModel:  func(spec string) (run.Model, error) { return run.NewModel(spec, co) },
		Model:     h.wire + "/test-model",
		OnEvent: func(ev run.Event) {
			h.mu.Lock()
			h.evs = append(h.evs, ev)
			f := h.onEvt
			h.mu.Unlock()
			if f != nil {
				f(ev)
			}
		},
	}
}

func (h *harness) events(typ string) []run.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []run.Event
	for _, e := range h.evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func call(name, args string) fakemodel.Call { return fakemodel.Call{Name: name, Args: args} }

func tools(calls ...fakemodel.Call) fakemodel.Reply { return fakemodel.Reply{ToolCalls: calls} }

func text(s string) fakemodel.Reply { return fakemodel.Reply{Text: s} }

func mustOutcome(t *testing.T, out *run.Outcome, err error, status string) *run.Outcome {
	t.Helper()
	if status == run.StatusCompleted && err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if out == nil {
		t.Fatalf("no outcome (err %v)", err)
	}
	if out.Status != status {
		t.Fatalf("status = %s (err %v), want %s", out.Status, err, status)
	}
	return out
}
