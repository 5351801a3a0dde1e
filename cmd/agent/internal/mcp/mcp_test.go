//go:build unix

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/agentskills/agent/internal/testutil/nspid"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

func toolNames(t *testing.T, s *session) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

func call(t *testing.T, s *session, name string, args any) *sdkmcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(res *sdkmcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdkmcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, res *sdkmcp.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s is not an object: %v", b, err)
	}
	return m
}

func echoPID(t *testing.T, s *session) int {
	t.Helper()
	res := call(t, s, "echo", map[string]any{"text": "hi"})
	if res.IsError {
		t.Fatalf("echo failed: %s", text(res))
	}
	inner := int(structured(t, res)["pid"].(float64))
	pid := nspid.Host(s.cmd.Process.Pid, inner)
	if pid == 0 {
		t.Fatalf("no process under agent mcp (%d) sees itself as %d", s.cmd.Process.Pid, inner)
	}
	return pid
}

// TestTools: every active skill's plugin tools, use_skill and the script
// tools, listed from the registry cache without starting a process, with
// object input schemas; results as structuredContent and text; tool errors
// as isError with code and message.
func TestTools(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)

	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		var head struct{ Type string }
		if err := json.Unmarshal(schema, &head); err != nil || head.Type != "object" {
			t.Errorf("tool %s: input schema %s is not an object schema", tool.Name, schema)
		}
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	for _, want := range []string{"use_skill", "script_list", "script_help", "script_run", "echo", "slow", "crash", "fail", "image", "pdf"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if kids := children(s.cmd.Process.Pid); len(kids) != 0 {
		for _, k := range kids {
			cl, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(k), "cmdline"))
			t.Errorf("listing tools started process %d: %q", k, cl)
		}
	}

	cases := []struct {
		name, tool string
		args       any
		isError    bool
		want       map[string]any // subset of structuredContent
		wantText   string         // substring of the text
	}{
		{name: "object result", tool: "echo", args: map[string]any{"text": "ada"}, want: map[string]any{"text": "ada"}, wantText: `"text":"ada"`},
		{name: "string result is wrapped", tool: "slow", args: map[string]any{"millis": 1}, want: map[string]any{"result": "done"}, wantText: `"done"`},
		{name: "tool error", tool: "fail", args: map[string]any{}, isError: true, want: map[string]any{"error": "probe_failed", "message": "it failed on purpose"}},
		{name: "use_skill", tool: "use_skill", args: map[string]any{"skill": "probe", "args": []string{"Ada", "care"}}, want: map[string]any{"skill": "probe", "instructions": "Probe Ada with care. All: Ada care\n"}},
		{name: "script_run", tool: "script_run", args: map[string]any{"skill_name": "probe", "script_name": "hello", "args": []string{"Ada"}}, wantText: "Ada"},
		{name: "unknown tool", tool: "nope", args: map[string]any{}, isError: true, want: map[string]any{"error": "unknown_tool"}},
		{name: "bad arguments", tool: "use_skill", args: map[string]any{"skill": 3}, isError: true, want: map[string]any{"error": "invalid_args"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if tc.tool == "nope" && err != nil {
				return // go-sdk may answer an unknown name itself
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tc.isError {
				t.Fatalf("isError = %v, want %v: %s", res.IsError, tc.isError, text(res))
			}
			got := structured(t, res)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("structuredContent[%s] = %#v, want %#v (all: %v)", k, got[k], v, got)
				}
			}
			if !strings.Contains(text(res), tc.wantText) {
				t.Errorf("text %q lacks %q", text(res), tc.wantText)
			}
		})
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			n, _ := strconv.Atoi(e.Name())
			out = append(out, n)
		}
	}
	return out
}

// TestPrompts: a user-invocable skill is a prompt with one "arguments"
// argument described by argument-hint; getting it fills $ARGUMENTS.
func TestPrompts(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)
	res, err := s.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*sdkmcp.Prompt{}
	for _, p := range res.Prompts {
		byName[p.Name] = p
	}
	p := byName["probe"]
	if p == nil || byName["notes"] != nil {
		t.Fatalf("prompts = %v; want probe and not notes (user-invocable: false)", byName)
	}
	if p.Description != "Tools that exercise the MCP server." || len(p.Arguments) != 1 || p.Arguments[0].Name != "arguments" || p.Arguments[0].Description != "<who> [how]" {
		t.Errorf("prompt = %+v, args %+v", p, p.Arguments[0])
	}
	got, err := s.GetPrompt(context.Background(), &sdkmcp.GetPromptParams{Name: "probe", Arguments: map[string]string{"arguments": "Ada gently"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("messages = %+v", got.Messages)
	}
	if body := got.Messages[0].Content.(*sdkmcp.TextContent).Text; body != "Probe Ada with gently. All: Ada gently\n" {
		t.Errorf("body = %q", body)
	}
}

// TestResources: each active skill's files are listed as
// skill://<name>/<path> without content and read on demand.
func TestResources(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)
	res, err := s.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	for _, want := range []string{"skill://probe/SKILL.md", "skill://probe/references/guide.md", "skill://probe/scripts/hello.py"} {
		if !slices.Contains(uris, want) {
			t.Errorf("resources lack %s: %v", want, uris)
		}
	}
	got, err := s.ReadResource(context.Background(), &sdkmcp.ReadResourceParams{URI: "skill://probe/references/guide.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Contents) != 1 || got.Contents[0].Text != "# Guide\nRead me on demand.\n" || got.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("contents = %+v", got.Contents)
	}
	if _, err := s.ReadResource(context.Background(), &sdkmcp.ReadResourceParams{URI: "skill://probe/../../registry.json"}); err == nil {
		t.Error("reading outside the skill worked")
	}
}

// TestListChanged: add, remove, untrust and trust while a session is open
// send list_changed for tools, prompts and resources, and the lists follow.
func TestListChanged(t *testing.T) {
	t.Parallel()
	home := newHome(t, "probe")
	var tools, prompts, resources atomic.Int32
	changed := make(chan string, 64)
	s := connect(t, home, &sdkmcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdkmcp.ToolListChangedRequest) {
			tools.Add(1)
			changed <- "tools"
		},
		PromptListChangedHandler: func(context.Context, *sdkmcp.PromptListChangedRequest) {
			prompts.Add(1)
			changed <- "prompts"
		},
		ResourceListChangedHandler: func(context.Context, *sdkmcp.ResourceListChangedRequest) {
			resources.Add(1)
			changed <- "resources"
		},
	})
	pid := echoPID(t, s)

	steps := []struct {
		name       string
		args       []string
		wantTool   bool // echo listed afterwards
		wantNotes  bool // skill://notes/SKILL.md listed afterwards
		wantPrompt bool // probe listed as a prompt afterwards
	}{
		{"add", []string{"skill", "add", skillRepo(t), "notes", "--trust"}, true, true, true},
		{"untrust", []string{"skill", "untrust", "probe"}, false, true, false},
		{"trust", []string{"skill", "trust", "probe"}, true, true, true},
		{"remove", []string{"skill", "remove", "notes", "--yes"}, true, false, true},
	}
	for _, st := range steps {
		t0, p0, r0 := tools.Load(), prompts.Load(), resources.Load()
		agent(t, home, st.args...)
		if !eventually(10*time.Second, func() bool {
			return tools.Load() > t0 && prompts.Load() > p0 && resources.Load() > r0
		}) {
			t.Fatalf("%s: list_changed tools %d→%d prompts %d→%d resources %d→%d", st.name, t0, tools.Load(), p0, prompts.Load(), r0, resources.Load())
		}
		if got := slices.Contains(toolNames(t, s), "echo"); got != st.wantTool {
			t.Errorf("%s: echo listed = %v, want %v", st.name, got, st.wantTool)
		}
		rs, err := s.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		notes := slices.ContainsFunc(rs.Resources, func(r *sdkmcp.Resource) bool { return r.URI == "skill://notes/SKILL.md" })
		if notes != st.wantNotes {
			t.Errorf("%s: notes resource listed = %v, want %v", st.name, notes, st.wantNotes)
		}
		ps, err := s.ListPrompts(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		probe := slices.ContainsFunc(ps.Prompts, func(p *sdkmcp.Prompt) bool { return p.Name == "probe" })
		if probe != st.wantPrompt {
			t.Errorf("%s: probe prompt listed = %v, want %v", st.name, probe, st.wantPrompt)
		}
	}
	// The replaced workspace's plugin is stopped; the new one works.
	if !eventually(10*time.Second, func() bool { return !alive(pid) }) {
		t.Errorf("plugin %d of the replaced workspace still runs", pid)
	}
	if got := echoPID(t, s); got == pid {
		t.Errorf("echo still answered by the old plugin %d", pid)
	}
}

// TestWarmConcurrentCalls: concurrent calls share one warm plugin process.
func TestWarmConcurrentCalls(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)
	first := echoPID(t, s)
	var wg sync.WaitGroup
	pids := make([]int, 20)
	start := time.Now()
	for i := range pids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 300}})
			if err != nil || res.IsError {
				t.Errorf("slow %d: %v %v", i, err, res)
				return
			}
			pids[i] = echoPID(t, s)
		}()
	}
	wg.Wait()
	for i, p := range pids {
		if p != first {
			t.Errorf("call %d ran in plugin %d, want the warm %d", i, p, first)
		}
	}
	// 20 calls of 300 ms in a row would take 6 s; concurrently they
	// overlap. Not a timing assertion on speed, just on overlap.
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("20 concurrent 300 ms calls took %s: they did not run concurrently", el)
	}
}

// TestCancel: a client cancelling a slow call (notifications/cancelled)
// cancels the plugin call; the next call works on the same plugin.
func TestCancel(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)
	pid := echoPID(t, s)
	mark := filepath.Join(t.TempDir(), "mark")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &sdkmcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 60000, "mark": mark}})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call returned %v", err)
	}
	if !eventually(10*time.Second, func() bool {
		b, _ := os.ReadFile(mark)
		return string(b) == "canceled"
	}) {
		t.Fatal("the plugin call was not canceled")
	}
	if got := echoPID(t, s); got != pid {
		t.Errorf("after a cancel the plugin changed %d → %d; it should stay warm", pid, got)
	}
}

// TestProgress: a client's progress token gets elapsed-time notifications
// while the call runs.
func TestProgress(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	var mu sync.Mutex
	var got []*sdkmcp.ProgressNotificationParams
	s := connect(t, home, &sdkmcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdkmcp.ProgressNotificationClientRequest) {
			mu.Lock()
			got = append(got, req.Params)
			mu.Unlock()
		},
	})
	params := &sdkmcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 2500}}
	params.SetProgressToken("tok-1")
	res, err := s.CallTool(context.Background(), params)
	if err != nil || res.IsError {
		t.Fatalf("slow: %v %+v", err, res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 1 {
		t.Fatal("no progress notification during a 2.5 s call")
	}
	for i, p := range got {
		if p.ProgressToken != "tok-1" || p.Progress <= 0 || (i > 0 && p.Progress <= got[i-1].Progress) || !strings.Contains(p.Message, "slow running for") {
			t.Errorf("progress %d = %+v", i, p)
		}
	}
}

// TestCrash: a crash is one plugin_crashed error; the next call restarts
// the plugin.
func TestCrash(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)
	pid := echoPID(t, s)
	res := call(t, s, "crash", map[string]any{})
	if !res.IsError || structured(t, res)["error"] != "plugin_crashed" {
		t.Fatalf("crash = %s", text(res))
	}
	if got := echoPID(t, s); got == pid || got == 0 {
		t.Errorf("after the crash echo ran in %d (crashed %d)", got, pid)
	}
}

// TestBinaryContent: {mime_type, data} results are MCP image content for
// image/* and an embedded resource blob otherwise.
func TestBinaryContent(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil)
	png := call(t, s, "image", map[string]any{})
	img, ok := png.Content[0].(*sdkmcp.ImageContent)
	if !ok || img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
		t.Errorf("image content = %#v", png.Content[0])
	}
	pdf := call(t, s, "pdf", map[string]any{})
	er, ok := pdf.Content[0].(*sdkmcp.EmbeddedResource)
	if !ok || er.Resource.MIMEType != "application/pdf" || !bytes.HasPrefix(er.Resource.Blob, []byte("%PDF-")) {
		t.Errorf("pdf content = %#v", pdf.Content[0])
	}
	if m := structured(t, pdf); m["mime_type"] != "application/pdf" || m["bytes"].(float64) == 0 {
		t.Errorf("pdf structuredContent = %v", m)
	}
}

// TestLazy: --lazy lists use_skill, call_tool and the script tools;
// use_skill returns the skill's body and its tools' schemas; call_tool
// calls them.
func TestLazy(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil, "--lazy")
	names := toolNames(t, s)
	if want := []string{"call_tool", "script_help", "script_list", "script_run", "use_skill"}; !slices.Equal(names, want) {
		t.Fatalf("--lazy tools = %v, want %v", names, want)
	}
	res := call(t, s, "use_skill", map[string]any{"skill": "probe"})
	var r struct {
		Instructions string `json:"instructions"`
		Tools        []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	// The first text is the result; without args a note follows it.
	if err := json.Unmarshal([]byte(res.Content[0].(*sdkmcp.TextContent).Text), &r); err != nil {
		t.Fatal(err)
	}
	var tn []string
	for _, tool := range r.Tools {
		tn = append(tn, tool.Name)
	}
	if !slices.Contains(tn, "echo") || !strings.HasPrefix(r.Instructions, "Probe") || !strings.Contains(string(r.Tools[0].InputSchema), "object") {
		t.Errorf("use_skill = %s", text(res))
	}
	got := call(t, s, "call_tool", map[string]any{"tool": "echo", "arguments": map[string]any{"text": "lazy"}})
	if got.IsError || structured(t, got)["text"] != "lazy" {
		t.Errorf("call_tool echo = %s", text(got))
	}
}

// TestShutdown: stdin EOF and SIGTERM end the server cleanly with every
// plugin gone.
func TestShutdown(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	for _, how := range []string{"stdin EOF", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			s := connect(t, home, nil)
			pid := echoPID(t, s)
			done := make(chan error, 1)
			if how == "SIGTERM" {
				if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				go func() { done <- s.Wait() }()
			} else {
				go func() { done <- s.Close() }() // closes stdin, then waits
			}
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the server did not end")
			}
			if !eventually(5*time.Second, func() bool { return s.cmd.ProcessState != nil || !alive(s.cmd.Process.Pid) }) {
				t.Error("agent mcp still runs")
			}
			if alive(pid) {
				t.Errorf("plugin %d outlived the server", pid)
			}
			if how == "stdin EOF" {
				if ps := s.cmd.ProcessState; ps != nil && ps.ExitCode() != 0 {
					t.Errorf("exit code %d after stdin EOF; stderr: %s", ps.ExitCode(), s.stderr.String())
				}
			}
		})
	}
}

// TestIdleTimeout: a plugin unused for --idle-timeout is stopped and
// starts again on the next call.
func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	s := connect(t, home, nil, "--idle-timeout", "300ms")
	pid := echoPID(t, s)
	if !eventually(10*time.Second, func() bool { return !alive(pid) }) {
		t.Fatalf("idle plugin %d was not stopped", pid)
	}
	if got := echoPID(t, s); got == pid {
		t.Errorf("echo answered by the stopped plugin %d", pid)
	}
}

// TestConfig: `agent mcp config <client>` prints a snippet that runs this
// binary's `mcp`; an unknown client is a usage error.
func TestConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, client := range []string{"claude", "cursor", "vscode"} {
		out, err := exec.Command(agentBin, "mcp", "config", client, "--lazy").Output()
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("%s: %v\n%s", client, err, out)
		}
		key := "mcpServers"
		if client == "vscode" {
			key = "servers"
		}
		a := v[key]["agent"]
		if a.Command != agentBin || !slices.Equal(a.Args, []string{"mcp", "--lazy"}) {
			t.Errorf("%s: %s", client, out)
		}
	}
	cmd := exec.Command(agentBin, "mcp", "config", "codex")
	cmd.Env = env(home)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "[mcp_servers.agent]\ncommand = \""+agentBin+"\"\nargs = [\"mcp\"]\nenv = { AGENT_HOME = \""+home+"\", AGENT_SKILLS = \"all\" }\n") {
		t.Errorf("codex: %v\n%s", err, out)
	}
	err = exec.Command(agentBin, "mcp", "config", "emacs").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("unknown client: %v, want exit 2", err)
	}
}
