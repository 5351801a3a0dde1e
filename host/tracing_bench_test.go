//go:build unix

package host

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel"
)

// benchTracedInvoke makes warm calls as Workspace.Call does: each under an
// execute_tool span of the global tracer (a no-op unless tracing is on),
// and reports the median call.
func benchTracedInvoke(b *testing.B) {
	h := New(WithLogger(hclog.NewNullLogger()))
	defer h.Close()
	h.Register(tp())
	tracer := otel.Tracer("bench")
	call := func() {
		ctx, span := tracer.Start(context.Background(), "execute_tool echo")
		if _, err := h.Invoke(ctx, "tp", "echo", benchArgs); err != nil {
			b.Fatal(err)
		}
		span.End()
	}
	call()
	times := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		call()
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns")
}

// BenchmarkWarmInvokeTracingOff is a warm call with tracing off (no OTEL_*
// set). Built with -tags notrace it is the baseline without the host's
// tracing plumbing; docs/benchmarks.md compares the two builds, run
// alternately.
func BenchmarkWarmInvokeTracingOff(b *testing.B) { benchTracedInvoke(b) }
