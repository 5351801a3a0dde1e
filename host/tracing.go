//go:build !notrace

package host

import (
	"context"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/agentskills/agent/internal/ground/semconv"
	"github.com/agentskills/agent/internal/telemetry"
	"github.com/agentskills/agent/sdk"
)

var tracer = otel.Tracer(semconv.Scope)

// dialTracing is what every plugin connection dials with when this process
// traces: otelgrpc's client handler, which puts the call's trace context in
// the request metadata, and an interceptor that hands the spans the plugin
// returns in the reply's trailer (sdk.MetadataSpans) to this process's
// exporter as the skill's. With tracing off it is nothing: otelgrpc's
// handlers cost every call a few allocations even under the no-op tracer
// (docs/benchmarks.md), and without a traceparent in the metadata the
// plugin adds none of its own (sdk.serverTracing).
func dialTracing(skill string, warn func(string, ...any)) []grpc.DialOption {
	if !telemetry.Enabled() {
		return nil
	}
	return []grpc.DialOption{
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithFilter(sdk.TracedRPC))),
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if !trace.SpanFromContext(ctx).IsRecording() {
				return invoker(ctx, method, req, reply, cc, opts...)
			}
			var md metadata.MD
			err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Trailer(&md))...)
			if v := md.Get(sdk.MetadataSpans); len(v) > 0 {
				if ierr := telemetry.Import([]byte(v[0]), skill); ierr != nil {
					warn("plugin spans dropped", "skill", skill, "error", ierr)
				}
			}
			return err
		}),
	}
}

// startLaunchSpan starts the span of one plugin start; how the binary ran
// goes in agent.plugin.launch.
func startLaunchSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	return tracer.Start(ctx, "plugin launch "+name)
}

func endLaunchSpan(span trace.Span, how string, err error) {
	if span.IsRecording() {
		span.SetAttributes(semconv.AgentPluginLaunch.String(how))
		if err != nil {
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}
