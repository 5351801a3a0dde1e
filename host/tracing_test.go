//go:build unix && !notrace

package host

import (
	"context"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/agentskills/agent/internal/telemetry"
)

// TestPluginSpansReturnWithTheReply runs a real plugin process under a
// traced call: the host's gRPC client span carries the context over, and
// the plugin's server span and its author's span (sdk.StartSpan) come back
// in the reply's trailer to the host's exporter, children of the host's
// spans in one trace.
func TestPluginSpansReturnWithTheReply(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OTEL_TRACES_EXPORTER", "file")
	p, err := telemetry.Start(context.Background(), telemetry.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t)
	h.Register(tp())
	ctx, root := otel.Tracer("test").Start(context.Background(), "execute_tool echo")
	for range 2 { // cold, then warm
		if _, err := h.Invoke(ctx, "tp", "echo", json.RawMessage(`{"text":"hi"}`)); err != nil {
			t.Fatal(err)
		}
	}
	root.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	traces, err := telemetry.ReadTraces(telemetry.TracesDir(home))
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 {
		t.Fatalf("%d traces, want 1: %+v", len(traces), traces)
	}
	byID := map[string]telemetry.Span{}
	var names []string
	for _, s := range traces[0].Spans {
		byID[s.SpanID] = s
		names = append(names, s.Name)
	}
	parentName := func(s telemetry.Span) string { return byID[s.ParentID].Name }
	count := map[string]int{}
	for _, s := range traces[0].Spans {
		count[s.Name]++
		switch s.Name {
		case "plugin launch tp":
			if parentName(s) != "execute_tool echo" || s.Attrs["agent.plugin.launch"] != "sealed_copy" && s.Attrs["agent.plugin.launch"] != "exec_stop" {
				t.Errorf("launch span %+v", s)
			}
		case "echo work":
			if parentName(s) != "skill.v1.Skill/Invoke" || byID[s.ParentID].Kind != "server" || s.Service != "tp" {
				t.Errorf("author span %+v under %+v, want under the plugin's server span, service tp", s, byID[s.ParentID])
			}
		}
	}
	if count["plugin launch tp"] != 1 || count["echo work"] != 2 || count["skill.v1.Skill/Invoke"] != 4 {
		t.Errorf("spans %v: want one launch, two author spans, two client and two server Invoke spans", names)
	}
}
