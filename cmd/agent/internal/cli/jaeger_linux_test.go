package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/testutil/fakemodel"
	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/jaegertest"
)

// TestJaeger sends the real agent binary's spans to a real trace backend,
// Jaeger, over OTLP/HTTP as the standard OTEL_* variables say, and reads
// them back through Jaeger's query API (SPEC §17): the spans the host makes,
// the plugin's own spans made in the plugin process, and the script's, in
// one trace with the parents the references name; and an MCP client's
// trace context, which the server's span continues.
func TestJaeger(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	j := jaegertest.Start(t)
	agent := buildAgent(t)
	// The demo skill as a skill author publishes it: a Go plugin (built by
	// skill add against the SDK agent embeds) and a PEP 723 script.
	files := map[string]string{}
	gittest.AddTree(t, files, filepath.Join(moduleRoot, "examples", "skills", "hello-extended"), "examples/skills/hello-extended")
	repo := gittest.NewRepo(t, files)
	home := filepath.Join(t.TempDir(), "home")
	env := append(os.Environ(), "AGENT_HOME="+home, "AGENT_SKILLS=hello-extended", "AGENT_UV=/nonexistent/uv")
	add := exec.Command(agent, "skill", "add", repo.Dir(), "examples/skills/hello-extended", "--trust")
	add.Env = env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("skill add: %v\n%s", err, out)
	}

	t.Run("agent run", func(t *testing.T) {
		work := t.TempDir()
		srv, err := fakemodel.Start(
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "use_skill", Args: `{"skill":"hello-extended"}`}}},
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "greet_in_language", Args: `{"name":"Ada","language":"fr"}`}}},
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "script_run", Args: `{"skill_name":"hello-extended","script_name":"advanced_greeting","args":["Ada","--language","es"]}`}}},
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "attempt_completion", Args: "{}"}}},
			fakemodel.Reply{Text: "Greeted Ada."},
		)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		const service = "agent-jaeger-run"
		cmd := exec.Command(agent, "run", "--model", "openai/fake", "--events=none", "Greet Ada")
		cmd.Dir = work
		cmd.Env = append(env, "AGENT_WORKSPACE="+work, "OPENAI_API_KEY=test", "OPENAI_BASE_URL="+srv.OpenAIURL())
		cmd.Env = append(cmd.Env, j.Env(service)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(out)) != "Greeted Ada." {
			t.Fatalf("agent run: %v\nstdout: %s\nstderr:\n%s", err, out, &stderr)
		}
		if got := srv.Requests(); len(got) != 5 {
			t.Fatalf("%d model calls, want 5", len(got))
		}

		// The run is one trace of the service; the spans the plugins
		// returned are in it under the skills' names.
		// Jaeger stores the exports of one flush in any order: wait for
		// every span the run makes (the checks below say which is missing
		// if one never comes).
		tr := oneTrace(t, j, service, spanCounts{
			"agent run": 1, "invoke_agent agent": 1, "chat fake": 5,
			"execute_tool use_skill": 1, "execute_tool greet_in_language": 1, "execute_tool script_run": 1, "execute_tool attempt_completion": 1,
			"plugin launch hello-extended": 1, "plugin launch __exec": 1, "plugin launch base": 1,
			"skill.v1.Skill/Invoke": 6, "script advanced_greeting.py": 1,
		})
		byID := j.WaitTrace(t, tr.TraceID, func(x jaegertest.Trace) bool { return len(x.Spans) == len(tr.Spans) })
		if len(byID.Spans) != len(tr.Spans) {
			t.Fatalf("/api/traces/%s has %d spans, the search found %d", tr.TraceID, len(byID.Spans), len(tr.Spans))
		}
		tr = byID
		t.Log(tr)
		check := traceChecker{t: t, tr: tr}

		root := check.one("agent run")
		check.parent(root, "")
		check.service(root, service)
		check.tag(root, "process.exit.code", "0")

		// The command runs one agent (invoke_agent), whose model requests
		// (chat) and tool calls (execute_tool, use_skill first) are its
		// children.
		agentSpan := check.one("invoke_agent agent")
		check.parent(agentSpan, root.SpanID)
		check.tag(agentSpan, "gen_ai.operation.name", "invoke_agent")
		check.tag(agentSpan, "gen_ai.provider.name", "openai")
		chats := tr.Named("chat fake")
		if len(chats) != 5 {
			t.Errorf("%d chat spans, want one per model request (5)\n%s", len(chats), tr)
		}
		for _, c := range chats {
			check.parent(c, agentSpan.SpanID)
			check.tag(c, "span.kind", "client")
			check.tag(c, "gen_ai.request.model", "fake")
		}
		useSkill := check.one("execute_tool use_skill")
		check.parent(useSkill, agentSpan.SpanID)
		check.tag(useSkill, "gen_ai.operation.name", "execute_tool")
		check.tag(useSkill, "gen_ai.tool.name", "use_skill")
		check.tagSet(useSkill, "gen_ai.tool.call.id")

		// A Go plugin's tool: execute_tool, the host's gRPC call, and the
		// plugin's own server span, made in the plugin process and sent
		// back with the reply.
		greet := check.one("execute_tool greet_in_language")
		check.parent(greet, agentSpan.SpanID)
		check.tag(greet, "gen_ai.skill.name", "hello-extended")
		check.tagSet(greet, "gen_ai.tool.call.id")
		if greet.StartTime < useSkill.StartTime+useSkill.Duration {
			t.Errorf("greet_in_language started before use_skill ended\n%s", tr)
		}
		check.pluginCall(greet, service, "hello-extended")
		check.childNamed(greet, "plugin launch hello-extended")

		// A script through the exec plugin: its span is the plugin's,
		// under the plugin's server span.
		script := check.one("execute_tool script_run")
		check.parent(script, agentSpan.SpanID)
		execServer := check.pluginCall(script, service, "__exec")
		run := check.one("script advanced_greeting.py")
		check.parent(run, execServer.SpanID)
		check.service(run, "__exec")
		check.tag(run, "process.exit.code", "0")
		if run.StartTime < execServer.StartTime || run.StartTime+run.Duration > execServer.StartTime+execServer.Duration {
			t.Errorf("the script's span is not within the plugin's\n%s", tr)
		}
	})

	// An MCP client's trace context in params._meta: the server's span for
	// the request joins the trace the client chose, under the client's span.
	t.Run("mcp tools/call", func(t *testing.T) {
		const service = "agent-jaeger-mcp"
		traceID, parentID := randomHex(t, 16), randomHex(t, 8)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.Command(agent, "mcp")
		cmd.Env = append(append(env, "AGENT_WORKSPACE="+t.TempDir()), j.Env(service)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "jaeger-test", Version: "1"}, nil)
		// Close waits this long for agent mcp to flush its spans and exit
		// once stdin is closed, before it signals it.
		cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
		if err != nil {
			t.Fatalf("connect to agent mcp: %v\n%s", err, &stderr)
		}
		res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{
			Meta:      sdkmcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"},
			Name:      "greet_in_language",
			Arguments: map[string]any{"name": "Ada", "language": "de"},
		})
		if err != nil || res.IsError {
			t.Fatalf("tools/call: %v %+v\n%s", err, res, &stderr)
		}
		if text := toolText(res); !strings.Contains(text, "Hallo, Ada!") {
			t.Fatalf("tools/call answered %q", text)
		}
		if err := cs.Close(); err != nil {
			t.Fatalf("agent mcp did not exit cleanly: %v\n%s", err, &stderr)
		}

		tr := j.WaitTrace(t, traceID, spanCounts{
			"tools/call greet_in_language": 1, "execute_tool greet_in_language": 1,
			"plugin launch hello-extended": 1, "skill.v1.Skill/Invoke": 2,
		}.in)
		t.Log(tr)
		check := traceChecker{t: t, tr: tr}
		if tr.TraceID != traceID {
			t.Fatalf("Jaeger answered trace %s for %s", tr.TraceID, traceID)
		}
		server := check.one("tools/call greet_in_language")
		check.parent(server, parentID)
		check.service(server, service)
		check.tag(server, "span.kind", "server")
		check.tag(server, "mcp.method.name", "tools/call")
		check.tag(server, "gen_ai.tool.name", "greet_in_language")
		check.tag(server, "network.transport", "pipe")
		check.tagSet(server, "jsonrpc.request.id")
		check.tagSet(server, "mcp.protocol.version")
		// Only the call carried the context: initialize and tools/list are
		// traces of their own.
		if len(tr.Named("initialize")) > 0 {
			t.Errorf("initialize joined the client's trace\n%s", tr)
		}
		call := check.one("execute_tool greet_in_language")
		check.parent(call, server.SpanID)
		check.tag(call, "gen_ai.skill.name", "hello-extended")
		check.pluginCall(call, service, "hello-extended")

		// The search by service finds it too.
		traces, err := j.Traces(ctx, service)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, x := range traces {
			found = found || x.TraceID == traceID
		}
		if !found {
			t.Errorf("/api/traces?service=%s does not list trace %s (%d traces)", service, traceID, len(traces))
		}
	})
}

// randomHex is n random bytes in lower-case hex: a trace or span ID.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// toolText is the text content of a tool result.
func toolText(res *sdkmcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdkmcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// spanCounts is how many spans of each name a complete trace holds.
type spanCounts map[string]int

// in reports whether tr holds at least the spans of c.
func (c spanCounts) in(tr jaegertest.Trace) bool {
	for name, n := range c {
		if len(tr.Named(name)) < n {
			return false
		}
	}
	return true
}

// oneTrace waits until Jaeger's search for service finds a trace holding
// the spans of want, and fails unless it finds exactly one trace.
func oneTrace(t *testing.T, j *jaegertest.Jaeger, service string, want spanCounts) jaegertest.Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var traces []jaegertest.Trace
	var err error
	for {
		traces, err = j.Traces(ctx, service)
		if err == nil && len(traces) > 0 && want.in(traces[0]) {
			break
		}
		select {
		case <-ctx.Done():
			var b strings.Builder
			for _, tr := range traces {
				b.WriteString(tr.String())
			}
			t.Fatalf("no complete trace of %s in Jaeger (%v; want %v):\n%s\njaeger log:\n%s", service, err, want, &b, j.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(traces) != 1 {
		var b strings.Builder
		for _, tr := range traces {
			b.WriteString(tr.String())
		}
		t.Fatalf("%d traces of %s, want 1:\n%s", len(traces), service, &b)
	}
	return traces[0]
}

// traceChecker asserts the shape of one trace, drawing it in each failure.
type traceChecker struct {
	t  *testing.T
	tr jaegertest.Trace
}

func (c traceChecker) one(name string) jaegertest.Span {
	c.t.Helper()
	s := c.tr.Named(name)
	if len(s) != 1 {
		c.t.Fatalf("%d spans %q, want 1\n%s", len(s), name, c.tr)
	}
	return s[0]
}

func (c traceChecker) byID(id string) (jaegertest.Span, bool) {
	for _, s := range c.tr.Spans {
		if s.SpanID == id {
			return s, true
		}
	}
	return jaegertest.Span{}, false
}

func (c traceChecker) parentOf(s jaegertest.Span) jaegertest.Span {
	c.t.Helper()
	p, ok := c.byID(s.Parent())
	if !ok {
		c.t.Fatalf("%s: parent %q is not in the trace\n%s", s.OperationName, s.Parent(), c.tr)
	}
	return p
}

func (c traceChecker) parent(s jaegertest.Span, want string) {
	c.t.Helper()
	if got := s.Parent(); got != want {
		c.t.Errorf("%s: parent %q, want %q\n%s", s.OperationName, got, want, c.tr)
	}
	for _, r := range s.References {
		if r.TraceID != c.tr.TraceID {
			c.t.Errorf("%s: reference to trace %s, not %s", s.OperationName, r.TraceID, c.tr.TraceID)
		}
	}
}

func (c traceChecker) service(s jaegertest.Span, want string) {
	c.t.Helper()
	if got := c.tr.Service(s); got != want {
		c.t.Errorf("%s: service %q, want %q", s.OperationName, got, want)
	}
}

func (c traceChecker) tag(s jaegertest.Span, key, want string) {
	c.t.Helper()
	if got := s.Tag(key); got == nil || fmt.Sprint(got) != want {
		c.t.Errorf("%s: %s = %v, want %s", s.OperationName, key, got, want)
	}
}

func (c traceChecker) tagSet(s jaegertest.Span, key string) {
	c.t.Helper()
	if got := s.Tag(key); got == nil || fmt.Sprint(got) == "" {
		c.t.Errorf("%s: no %s", s.OperationName, key)
	}
}

func (c traceChecker) childNamed(parent jaegertest.Span, name string) jaegertest.Span {
	c.t.Helper()
	var found []jaegertest.Span
	for _, s := range c.tr.Children(parent.SpanID) {
		if s.OperationName == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		c.t.Fatalf("%s has %d children %q, want 1\n%s", parent.OperationName, len(found), name, c.tr)
	}
	return found[0]
}

// pluginCall checks that call (an execute_tool span) has the host's gRPC
// client span into the plugin as a child, and that under it is the plugin's
// server span, of the plugin's service; it returns the server span.
func (c traceChecker) pluginCall(call jaegertest.Span, host, plugin string) jaegertest.Span {
	c.t.Helper()
	const rpc = "skill.v1.Skill/Invoke"
	client := c.childNamed(call, rpc)
	c.service(client, host)
	c.tag(client, "span.kind", "client")
	server := c.childNamed(client, rpc)
	c.service(server, plugin)
	c.tag(server, "span.kind", "server")
	return server
}
