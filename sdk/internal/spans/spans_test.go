package spans

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func remoteParent() context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	return trace.ContextWithRemoteSpanContext(context.Background(), sc)
}

func TestCollectorReturnsTheCallsSpans(t *testing.T) {
	c := NewCollector()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())), sdktrace.WithSpanProcessor(c))
	tr := tp.Tracer("t")

	// Not under a sampled caller: nothing recorded.
	_, lone := tr.Start(context.Background(), "lone")
	if lone.IsRecording() {
		t.Fatal("a root span records: plugins must trace only under a traced host")
	}
	lone.End()

	ctx, server := tr.Start(remoteParent(), "server")
	c.Begin(server.SpanContext().TraceID())
	_, child := tr.Start(ctx, "child")
	child.End()
	data := c.End(server)
	server.End() // after the reply: must not be sent again
	var td tracepb.TracesData
	if err := proto.Unmarshal(data, &td); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rs := range td.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				names = append(names, s.Name)
				if s.Name == "server" && (s.EndTimeUnixNano == 0 || trace.SpanID(s.ParentSpanId) != (trace.SpanID{2})) {
					t.Errorf("server span snapshot %v: want an end time and the host's span as parent", s)
				}
			}
		}
	}
	if len(names) != 2 || names[0] != "child" || names[1] != "server" {
		t.Errorf("sent %v, want [child server]", names)
	}
	if len(c.ended) != 0 || len(c.active) != 0 || len(c.sent) != 0 {
		t.Errorf("collector keeps state after the call: %d %d %d", len(c.ended), len(c.active), len(c.sent))
	}
}
