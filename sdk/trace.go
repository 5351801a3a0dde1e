package sdk

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"github.com/agentskills/agent/sdk/internal/spans"
)

// MetadataSpans is the gRPC trailer key under which a plugin returns the
// spans it made during a call, OTLP protobuf encoded (TracesData). A plugin
// runs without the host's environment and may be stopped at any time, so
// it exports nothing itself: the host hands these spans to its exporter.
const MetadataSpans = "agent-spans-bin"

// TracerName is the instrumentation scope of the spans StartSpan makes.
const TracerName = "github.com/agentskills/agent/sdk"

var (
	traceOnce sync.Once
	collector *spans.Collector
)

// setupTracing makes the plugin's tracer provider the global one: it
// records a span only under a sampled caller (the host traces), and keeps
// what it records for the reply. The propagator is W3C trace context, as
// the host's.
func setupTracing() {
	traceOnce.Do(func() {
		collector = spans.NewCollector()
		res := resource.NewSchemaless(attribute.String("service.name", filepath.Base(os.Args[0])))
		tp := sdktrace.NewTracerProvider(
			sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())),
			sdktrace.WithSpanProcessor(collector),
			sdktrace.WithResource(res),
		)
		otel.SetTracerProvider(tp)
		otel.SetTextMapPropagator(propagation.TraceContext{})
	})
}

// serverTracing is the gRPC server option that continues the host's trace
// in the plugin. otelgrpc's handler runs only for a call whose metadata
// carries a traceparent: a host that does not trace sends none (it dials
// without otelgrpc), and its calls then cost nothing here.
func serverTracing() grpc.ServerOption {
	setupTracing()
	return grpc.StatsHandler(tracedOnly{otelgrpc.NewServerHandler(otelgrpc.WithFilter(TracedRPC))})
}

// tracedOnly hands inner the RPCs that came with a trace context.
type tracedOnly struct{ inner stats.Handler }

type tracedKey struct{}

func (h tracedOnly) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	md, _ := metadata.FromIncomingContext(ctx)
	if len(md.Get(traceparentKey)) == 0 {
		return ctx
	}
	return h.inner.TagRPC(context.WithValue(ctx, tracedKey{}, true), info)
}

func (h tracedOnly) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if traced, _ := ctx.Value(tracedKey{}).(bool); traced {
		h.inner.HandleRPC(ctx, s)
	}
}

// Connections are not traced (otelgrpc's handler ignores them too), but
// pass them on so that its connection bookkeeping stays whole.
func (h tracedOnly) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	return h.inner.TagConn(ctx, info)
}

func (h tracedOnly) HandleConn(ctx context.Context, s stats.ConnStats) { h.inner.HandleConn(ctx, s) }

// traceparentKey is the W3C header in gRPC metadata (lower case, as
// metadata keys are).
const traceparentKey = "traceparent"

// TracedRPC reports whether a gRPC call gets spans: the skill's own
// methods, not go-plugin's controller, broker and stdio streams, whose
// calls (a Shutdown at exit) would each be a trace of their own.
func TracedRPC(info *stats.RPCTagInfo) bool {
	return strings.HasPrefix(info.FullMethodName, "/skill.v1.Skill/")
}

// beginSpans marks the call of ctx in flight when the host traces it.
func beginSpans(ctx context.Context) {
	if collector == nil {
		return
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		collector.Begin(span.SpanContext().TraceID())
	}
}

// endSpans puts the call's spans in the reply's trailer.
func endSpans(ctx context.Context) {
	if collector == nil {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if data := collector.End(span); data != nil {
		_ = grpc.SetTrailer(ctx, metadata.Pairs(MetadataSpans, string(data)))
	}
}

// StartSpan starts a span of the plugin's own under the call's context and
// returns the context to pass on. It records only when the host traces the
// call; the host receives the span with the call's reply. End the span
// before the tool returns: a span still open then is lost.
func StartSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return otel.Tracer(TracerName).Start(ctx, name, trace.WithAttributes(attrs...))
}
