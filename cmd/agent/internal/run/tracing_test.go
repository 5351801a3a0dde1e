package run_test

import (
	"context"
	"testing"

	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/telemetry"
)

// TestRunSpans: with the file exporter, a run is an invoke_agent span, each
// model request a CLIENT chat span under it with the provider, the model
// and the tokens the (fake) provider reported, and each tool call an
// execute_tool under it; a delegated run is an invoke_agent of its skill
// inside the use_skill call that started it. Not parallel: the tracer
// provider is the process's.
func TestRunSpans(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OTEL_TRACES_EXPORTER", "file")
	p, err := telemetry.Start(context.Background(), telemetry.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, "anthropic", false,
		tools(call("use_skill", `{"skill":"summarize","args":"the long text"}`)), // coordinator
		tools(call("attempt_completion", `{}`)),                                  // delegated
		text("a short summary"),                                                  // delegated result
		// Two plugin calls in one step. act runs them concurrently, so
		// they must not depend on each other's order: an add and a done of
		// one item in two calls left it open when the done ran first, and
		// attempt_completion then asked the model once more.
		tools(call("todo", `{"add":["x"],"done":["x"]}`), call("todo", `{}`)), // coordinator, a plugin
		tools(call("attempt_completion", `{}`)),
		text("done"),
	)
	out, err := run.Start(context.Background(), h.opts, "summarize it")
	mustOutcome(t, out, err, run.StatusCompleted)
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	traces, err := telemetry.ReadTraces(telemetry.TracesDir(home))
	if err != nil || len(traces) != 1 {
		t.Fatalf("%d traces (%v), want the run's one: %+v", len(traces), err, traces)
	}
	spans := traces[0].Spans
	byID := map[string]telemetry.Span{}
	byName := map[string][]telemetry.Span{}
	for _, s := range spans {
		byID[s.SpanID] = s
		byName[s.Name] = append(byName[s.Name], s)
	}
	parent := func(s telemetry.Span) string { return byID[s.ParentID].Name }
	if n := len(byName["invoke_agent agent"]); n != 1 {
		t.Fatalf("%d invoke_agent agent spans: %+v", n, spans)
	}
	root := byName["invoke_agent agent"][0]
	if root.ParentID != "" || root.Attrs["gen_ai.operation.name"] != "invoke_agent" || root.Attrs["gen_ai.agent.name"] != "agent" ||
		root.Attrs["gen_ai.provider.name"] != "anthropic" || root.Attrs["gen_ai.request.model"] != "test-model" ||
		root.Attrs["gen_ai.conversation.id"] != out.JobID || root.Attrs["gen_ai.agent.id"] != out.RunID {
		t.Errorf("invoke_agent agent = %+v", root)
	}
	chats := byName["chat test-model"]
	if len(chats) != 6 {
		t.Fatalf("%d chat spans, want one per model request (6): %+v", len(chats), spans)
	}
	var coordinatorIn, delegatedIn int64
	for _, c := range chats {
		in, _ := c.Attrs["gen_ai.usage.input_tokens"].(float64)
		outTok, _ := c.Attrs["gen_ai.usage.output_tokens"].(float64)
		if c.Kind != "client" || c.Attrs["gen_ai.operation.name"] != "chat" || c.Attrs["gen_ai.provider.name"] != "anthropic" ||
			c.Attrs["gen_ai.request.model"] != "test-model" || in <= 0 || outTok <= 0 {
			t.Errorf("chat span %+v", c)
		}
		switch parent(c) {
		case "invoke_agent agent":
			coordinatorIn += int64(in)
		case "invoke_agent summarize":
			delegatedIn += int64(in)
		default:
			t.Errorf("chat span under %q", parent(c))
		}
	}
	if got, _ := root.Attrs["gen_ai.usage.input_tokens"].(float64); int64(got) != coordinatorIn {
		t.Errorf("invoke_agent agent counts %v input tokens, its chats %d", got, coordinatorIn)
	}
	use := byName["execute_tool use_skill"]
	if len(use) != 1 || use[0].ParentID != root.SpanID {
		t.Fatalf("execute_tool use_skill %+v, want one under invoke_agent agent", use)
	}
	sub := byName["invoke_agent summarize"]
	if len(sub) != 1 || sub[0].ParentID != use[0].SpanID || sub[0].Attrs["gen_ai.agent.name"] != "summarize" {
		t.Fatalf("invoke_agent summarize %+v, want one under execute_tool use_skill", sub)
	}
	if got, _ := sub[0].Attrs["gen_ai.usage.input_tokens"].(float64); int64(got) != delegatedIn || delegatedIn == 0 {
		t.Errorf("invoke_agent summarize counts %v input tokens, its chats %d", got, delegatedIn)
	}
	todos := byName["execute_tool todo"]
	if len(todos) != 2 {
		t.Fatalf("%d execute_tool todo spans, want 2", len(todos))
	}
	for _, s := range todos {
		if s.ParentID != root.SpanID || s.Attrs["gen_ai.tool.call.id"] == nil || s.Attrs["gen_ai.skill.name"] != "tester" {
			t.Errorf("execute_tool todo %+v", s)
		}
	}
	var completions []string
	for _, s := range byName["execute_tool attempt_completion"] {
		completions = append(completions, parent(s))
	}
	if len(completions) != 2 {
		t.Errorf("attempt_completion calls under %v, want one in each run", completions)
	}
}
