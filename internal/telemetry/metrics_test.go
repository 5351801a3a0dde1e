package telemetry

import (
	"context"
	"testing"
	"time"
)

// BenchmarkMetricsCall is what recording one call costs the server: the
// counter, the histogram and (for a failure) the error counter.
func BenchmarkMetricsCall(b *testing.B) {
	m, err := NewMetrics(context.Background(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	ctx := context.Background()
	b.Run("ok", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Call(ctx, "probe", "echo", "", 1700*time.Microsecond)
		}
	})
	b.Run("failed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m.Call(ctx, "probe", "fail", "probe_failed", 1700*time.Microsecond)
		}
	})
}
