//go:build unix

package mcp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/telemetry"
)

// traceEnv asks a real agent for the file exporter, flushed every 50 ms so
// that spans are on disk while the server runs.
var traceEnv = []string{"OTEL_TRACES_EXPORTER=file", "OTEL_BSP_SCHEDULE_DELAY=50"}

// TestMCPServerSpans: a real `agent mcp` over the probe plugin, with the
// file exporter, gives each request a SERVER span named as mcp.md says,
// whose parent is the client's span named in params._meta.traceparent;
// the call's execute_tool is its child, and the plugin's own span is in
// the same trace below that. On stdio and on streamable HTTP.
func TestMCPServerSpans(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	for _, tc := range []struct {
		name      string
		transport string
		traceID   string
		connect   func(t *testing.T) *sdkmcp.ClientSession
	}{
		{"stdio", "pipe", "4bf92f3577b34da6a3ce929d0e0e4736", func(t *testing.T) *sdkmcp.ClientSession {
			return connectEnv(t, home, traceEnv, nil).ClientSession
		}},
		{"http", "tcp", "5cf92f3577b34da6a3ce929d0e0e4737", func(t *testing.T) *sdkmcp.ClientSession {
			url, _, _ := startHTTPEnv(t, home, traceEnv, "--token", "tr4ce")
			client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cs, err := client.Connect(ctx, &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: "tr4ce"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := tc.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const clientSpan, failSpan = "00f067aa0ba902b7", "00f067aa0ba902b8"
			res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{
				Meta:      sdkmcp.Meta{"traceparent": "00-" + tc.traceID + "-" + clientSpan + "-01", "tracestate": "rojo=00f067aa0ba902b7"},
				Name:      "echo",
				Arguments: map[string]any{"text": "traced"},
			})
			if err != nil || res.IsError {
				t.Fatalf("echo: %v %+v", err, res)
			}
			res, err = cs.CallTool(ctx, &sdkmcp.CallToolParams{
				Meta: sdkmcp.Meta{"traceparent": "00-" + tc.traceID + "-" + failSpan + "-01"},
				Name: "fail",
			})
			if err != nil || !res.IsError {
				t.Fatalf("fail: %v %+v", err, res)
			}

			var spans []telemetry.Span
			byName := map[string][]telemetry.Span{}
			ok := eventually(30*time.Second, func() bool {
				spans = traceSpans(home, tc.traceID)
				clear(byName)
				for _, s := range spans {
					byName[s.Name] = append(byName[s.Name], s)
				}
				return len(byName["tools/call echo"]) == 1 && len(byName["execute_tool echo"]) == 1 &&
					len(byName["tools/call fail"]) == 1 && len(byName["execute_tool fail"]) == 1 &&
					len(byName["skill.v1.Skill/Invoke"]) >= 2
			})
			if !ok {
				t.Fatalf("spans of trace %s: %+v", tc.traceID, spans)
			}
			server := byName["tools/call echo"][0]
			if server.ParentID != clientSpan || server.Kind != "server" {
				t.Errorf("tools/call span: parent %q kind %q, want the client's %s and server", server.ParentID, server.Kind, clientSpan)
			}
			for k, want := range map[string]any{
				"mcp.method.name":       "tools/call",
				"gen_ai.tool.name":      "echo",
				"gen_ai.operation.name": "execute_tool",
				"network.transport":     tc.transport,
			} {
				if got := server.Attrs[k]; got != want {
					t.Errorf("tools/call %s = %v, want %v", k, got, want)
				}
			}
			for _, k := range []string{"jsonrpc.request.id", "mcp.protocol.version"} {
				if v, _ := server.Attrs[k].(string); v == "" {
					t.Errorf("tools/call has no %s: %v", k, server.Attrs)
				}
			}
			if _, ok := server.Attrs["error.type"]; ok || server.Status != "" {
				t.Errorf("a call that succeeded has an error: %+v", server)
			}
			tool := byName["execute_tool echo"][0]
			if tool.ParentID != server.SpanID {
				t.Errorf("execute_tool's parent is %q, want the tools/call span %s", tool.ParentID, server.SpanID)
			}
			// The plugin's span (returned with the reply) hangs below
			// execute_tool, through the host's client span.
			byID := map[string]telemetry.Span{}
			for _, s := range spans {
				byID[s.SpanID] = s
			}
			below := func(s telemetry.Span, ancestor string) bool {
				for i := 0; i < 10 && s.ParentID != ""; i++ {
					if s.ParentID == ancestor {
						return true
					}
					s = byID[s.ParentID]
				}
				return false
			}
			var inPlugin bool
			for _, s := range byName["skill.v1.Skill/Invoke"] {
				if s.Kind == "server" && s.Service != "" && s.Service != "agent" && below(s, tool.SpanID) {
					inPlugin = true
				}
			}
			if !inPlugin {
				t.Errorf("no plugin server span below execute_tool echo: %+v", byName["skill.v1.Skill/Invoke"])
			}

			failed := byName["tools/call fail"][0]
			if failed.ParentID != failSpan || failed.Attrs["error.type"] != "tool_error" || failed.Status != "error" {
				t.Errorf("failed tools/call span %+v, want parent %s, error.type tool_error", failed, failSpan)
			}
			if ft := byName["execute_tool fail"][0]; ft.ParentID != failed.SpanID || ft.Attrs["error.type"] != "probe_failed" {
				t.Errorf("failed execute_tool %+v", ft)
			}
		})
	}
}

// traceSpans are the spans of one trace under home's traces folder.
func traceSpans(home, traceID string) []telemetry.Span {
	traces, err := telemetry.ReadTraces(telemetry.TracesDir(home))
	if err != nil {
		return nil
	}
	for _, tr := range traces {
		if tr.ID == traceID {
			return tr.Spans
		}
	}
	return nil
}
