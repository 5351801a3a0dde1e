//go:build unix && !notrace

package host

import (
	"context"
	"testing"

	"github.com/agentskills/agent/internal/telemetry"
)

// BenchmarkWarmInvokeTracingOn is BenchmarkWarmInvokeTracingOff with
// tracing on and the file exporter: the host's and the plugin's gRPC
// spans, the plugin's spans returned in the trailer and every span written
// to a file. It sets the process's tracer provider, which stays set: run
// it in a process of its own (-bench 'TracingOn$') when comparing.
func BenchmarkWarmInvokeTracingOn(b *testing.B) {
	b.Setenv("OTEL_TRACES_EXPORTER", "file")
	p, err := telemetry.Start(context.Background(), telemetry.Options{Home: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := p.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	}()
	benchTracedInvoke(b)
}
