//go:build notrace

package host

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// With the notrace tag the host has no tracing plumbing: the baseline that
// BenchmarkWarmInvokeTracing's "off" is compared against
// (docs/benchmarks.md).

func dialTracing(string, func(string, ...any)) []grpc.DialOption { return nil }

func startLaunchSpan(ctx context.Context, _ string) (context.Context, trace.Span) {
	return ctx, trace.SpanFromContext(context.Background())
}

func endLaunchSpan(trace.Span, string, error) {}
