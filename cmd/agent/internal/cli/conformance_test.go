package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/cmd/agent/internal/cli"
	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/testutil/fakemodel"
	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/sdk"
)

// conformanceFloor is the deadline floor of every call in the conformance
// test: short, so that the deadline case takes seconds, not minutes; long
// enough for a cold plugin start on a loaded machine (1 s was not, under
// load 16); and below the script limit, so that slow.py, which sleeps
// past it, shows the script term of the policy.
const conformanceFloor = 10 * time.Second

var conformanceSkills = map[string]string{
	"skills/probe/SKILL.md": `---
name: probe
description: Tools that fail in every way a call can.
plugin:
  build: ./plugin
---
Call echo.
`,
	"skills/probe/plugin/main.go": `package main

import (
	"context"
	"os"

	"github.com/agentskills/agent/sdk"
)

type echoIn struct {
	Text string ` + "`json:\"text\"`" + `
}

func main() {
	sdk.Serve(sdk.NewSkill(
		sdk.NewTool("echo", "Echo text.", func(ctx context.Context, in echoIn) (string, error) {
			return in.Text, nil
		}),
		sdk.NewTool("crash", "Exit in the middle of the call.", func(ctx context.Context, in struct{}) (string, error) {
			os.Exit(3)
			return "", nil
		}),
		sdk.NewTool("hang", "Wait until canceled.", func(ctx context.Context, in struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}),
	))
}
`,
	// Sleeps past the call floor, within its own script limit.
	"skills/probe/scripts/slow.py": "\"\"\"Sleep, then answer. Usage: slow.py\"\"\"\nimport time\ntime.sleep(11)\nprint('{\"slept\": true}')\n",
	"skills/bent/SKILL.md":         "---\nname: bent\ndescription: A skill whose script is changed after install.\n---\nRun hi.\n",
	"skills/bent/scripts/hi.py":    "\"\"\"Say hi. Usage: hi.py\"\"\"\nprint('{\"hi\": true}')\n",
	"skills/forky/SKILL.md":        "---\nname: forky\ndescription: Runs in a sub-agent that may only echo.\ncontext: fork\nallowed-tools: [echo]\n---\nEcho $ARGUMENTS.\n",
	"skills/locked/SKILL.md":       "---\nname: locked\ndescription: Installed untrusted.\n---\nRun go.\n",
	"skills/locked/scripts/go.py":  "\"\"\"Go. Usage: go.py\"\"\"\nprint('{\"went\": true}')\n",
}

// conformanceCase is one call and the code every front end must give it
// ("" for success).
type conformanceCase struct {
	name, tool, args string
	want             string
	// runOnly: only `agent run` can express the case (a delegated run's
	// allowed-tools); the CLI and MCP have no sub-agent to limit.
	runOnly bool
}

var conformanceCases = []conformanceCase{
	{name: "success", tool: "echo", args: `{"text":"hi"}`, want: ""},
	{name: "unknown tool", tool: "no_such_tool", args: `{}`, want: sdk.CodeUnknownTool},
	{name: "bad args, not an object", tool: "echo", args: `[1]`, want: sdk.CodeInvalidArgs},
	{name: "bad args, against the schema", tool: "echo", args: `{"text":5}`, want: sdk.CodeInvalidArgs},
	{name: "untrusted skill", tool: "locked.go", args: `{}`, want: workspace.CodePermissionDenied},
	{name: "untrusted script", tool: "script_run", args: `{"skill_name":"locked","script_name":"go"}`, want: workspace.CodePermissionDenied},
	{name: "tampered skill", tool: "script_run", args: `{"skill_name":"bent","script_name":"hi"}`, want: workspace.CodeSkillTampered},
	{name: "plugin crash", tool: "crash", args: `{}`, want: sdk.CodePluginCrashed},
	{name: "deadline", tool: "hang", args: `{}`, want: sdk.CodeTimeout},
	{name: "script limit above the floor", tool: "script_run", args: `{"skill_name":"probe","script_name":"slow"}`, want: ""},
	{name: "use_skill of a fork skill", tool: "use_skill", args: `{"skill":"forky","args":["hi"]}`, want: ""},
	{name: "tool outside allowed-tools", tool: "script_list", args: `{}`, want: workspace.CodePermissionDenied, runOnly: true},
}

// TestCallConformance runs one table of calls through the three front ends
// (`agent call`, an MCP client's tools/call, a model's tool call in `agent
// run`) over the same installed skills, with a real plugin, real python3
// scripts and a real git repository, and asserts the same code from each.
func TestCallConformance(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is needed for the script cases")
	}
	agentBin := buildAgent(t)
	home := filepath.Join(t.TempDir(), "home")
	files := gittest.PluginModule(t, "skills/probe/plugin", "example.com/probe/plugin")
	for k, v := range conformanceSkills {
		files[k] = v
	}
	repo := gittest.NewRepo(t, files).FileURL()
	goEnv := goEnvironment(t)
	install := func(args ...string) {
		t.Helper()
		cmd := exec.Command(agentBin, append([]string{"skill", "add", repo}, args...)...)
		cmd.Env = append(os.Environ(), append(goEnv, "AGENT_HOME="+home)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("agent skill add %q: %v\n%s", args, err, out)
		}
	}
	install("probe", "bent", "forky", "--trust")
	install("locked", "--yes")

	env := map[string]string{
		"AGENT_HOME":           home,
		"AGENT_SKILLS":         "all-untrusted", // activates locked, which is untrusted
		"AGENT_SCRIPT_TIMEOUT": "20",
	}
	factory := func() (*cli.Factory, *bytes.Buffer) {
		ios, _, out, _ := cli.TestIO()
		f := cli.NewFactory(ios)
		f.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		f.Executable = func() (string, error) { return agentBin, nil }
		f.CallFloor = conformanceFloor
		return f, out
	}
	load := func(ctx context.Context) (*workspace.Workspace, error) {
		f, _ := factory()
		wc, err := f.WorkspaceConfig()
		if err != nil {
			return nil, err
		}
		return workspace.Load(ctx, wc)
	}
	// Change bent's script after install: its first use must refuse it.
	ws, err := load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bent := ws.Skill("bent")
	ws.Close()
	if bent == nil {
		t.Fatal("bent is not active")
	}
	if err := os.WriteFile(filepath.Join(bent.Entry.Path, "scripts", "hi.py"), []byte("print('{\"changed\": true}')\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	fronts := []struct {
		name string
		call func(t *testing.T, tc conformanceCase) string
	}{
		{"cli", func(t *testing.T, tc conformanceCase) string {
			f, out := factory()
			code := cli.Run(context.Background(), f, []string{"call", tc.tool, tc.args})
			var got struct {
				Success bool   `json:"success"`
				Error   string `json:"error"`
			}
			if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
				t.Fatalf("agent call printed %q (exit %d): %v", out.String(), code, err)
			}
			if (code == 0) != got.Success {
				t.Fatalf("exit %d with %s", code, out.String())
			}
			return got.Error
		}},
		// A server per call: the cases run at once, and one MCP host
		// shared by "plugin crash" and "deadline" would crash the other's
		// plugin.
		{"mcp", func(t *testing.T, tc conformanceCase) string { return mcpCaller(t, load)(t, tc) }},
		{"run", runCaller(t, load)},
	}
	// Every call shares nothing with the others (each front end loads its
	// own workspace and host per call), so all of them run at once: the
	// deadline and script-limit cases wait their time out beside the rest
	// of the package, not after it. t.Run from goroutines keeps them in
	// this test's -parallel slot: they wait, they hardly compute.
	var cases sync.WaitGroup
	for _, tc := range conformanceCases {
		cases.Go(func() {
			t.Run(tc.name, func(t *testing.T) {
				var calls sync.WaitGroup
				for _, fr := range fronts {
					if tc.runOnly && fr.name != "run" {
						continue
					}
					calls.Go(func() {
						t.Run(fr.name, func(t *testing.T) {
							if got := fr.call(t, tc); got != tc.want {
								t.Errorf("%s: %s %s gave code %q, want %q", fr.name, tc.tool, tc.args, got, tc.want)
							}
						})
					})
				}
				calls.Wait()
			})
		})
	}
	cases.Wait()
}

// mcpCaller serves the workspace over MCP in process (go-sdk's in-memory
// transport) and calls through --lazy's call_tool, which takes any name,
// as a client that learned it from use_skill would.
func mcpCaller(t *testing.T, load func(context.Context) (*workspace.Workspace, error)) func(*testing.T, conformanceCase) string {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := mcp.New(ctx, mcp.Options{Load: load, Lazy: true, IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdkmcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "conformance", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Close()
		srv.Close()
		cancel()
	})
	return func(t *testing.T, tc conformanceCase) string {
		res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{
			Name:      mcp.CallTool,
			Arguments: map[string]any{"tool": tc.tool, "arguments": json.RawMessage(tc.args)},
		})
		if err != nil {
			t.Fatalf("tools/call: %v", err)
		}
		if !res.IsError {
			return ""
		}
		var e sdk.Error
		if b, _ := json.Marshal(res.StructuredContent); json.Unmarshal(b, &e) != nil || e.Code == "" {
			t.Fatalf("error result without a code: %+v", res)
		}
		return e.Code
	}
}

// runCaller runs `agent run`'s loop over a fresh workspace per case with a
// fake model that makes the call, and reads the tool result the model got.
// A runOnly case is a `/forky` invocation whose run may use only echo.
func runCaller(t *testing.T, load func(context.Context) (*workspace.Workspace, error)) func(*testing.T, conformanceCase) string {
	return func(t *testing.T, tc conformanceCase) string {
		ws, err := load(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		script := []fakemodel.Reply{{ToolCalls: []fakemodel.Call{{Name: tc.tool, Args: tc.args}}}}
		if tc.tool == "use_skill" {
			// The delegated run of forky finishes at once.
			script = append(script, fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: run.ToolAttemptCompletion, Args: `{}`}}}, fakemodel.Reply{Text: "echoed"})
		}
		script = append(script, fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: run.ToolAttemptCompletion, Args: `{}`}}}, fakemodel.Reply{Text: "done"})
		srv, err := fakemodel.Start(script...)
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		var mu sync.Mutex
		var results []run.Event
		menv := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.AnthropicURL()}
		opts := run.Options{
			Workspace: ws,
			Store:     run.NewStore(t.TempDir()),
			NewModel: func(spec string) (run.Model, error) {
				return run.NewModel(spec, run.ClientOptions{LookupEnv: func(k string) (string, bool) { v, ok := menv[k]; return v, ok }})
			},
			Model: "anthropic/test-model",
			OnEvent: func(ev run.Event) {
				if ev.Type == run.TypeToolResult && ev.Tool == tc.tool {
					mu.Lock()
					results = append(results, ev)
					mu.Unlock()
				}
			},
		}
		query := "call the tool"
		if tc.runOnly {
			query = "/forky hi"
		}
		out, err := run.Start(context.Background(), opts, query)
		if err != nil || out.Status != run.StatusCompleted {
			t.Fatalf("run: %+v, %v", out, err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(results) != 1 {
			t.Fatalf("%d results for %s, want 1", len(results), tc.tool)
		}
		if !results[0].IsError {
			return ""
		}
		var e sdk.Error
		if json.Unmarshal([]byte(results[0].Result), &e) != nil || e.Code == "" {
			t.Fatalf("error result without a code: %q", results[0].Result)
		}
		return e.Code
	}
}
