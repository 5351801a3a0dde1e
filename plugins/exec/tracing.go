package exec

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
)

var tracer = otel.Tracer(semconv.Scope)

// withTraceparent gives a script the trace it runs in, as TRACEPARENT (and
// TRACESTATE), the variables OpenTelemetry's SDKs read for a process's
// parent span. Nothing is added when the call is not traced.
func withTraceparent(ctx context.Context, env []string) []string {
	if !trace.SpanFromContext(ctx).SpanContext().IsSampled() {
		return env
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	for _, k := range carrier.Keys() {
		env = append(env, strings.ToUpper(k)+"="+carrier.Get(k))
	}
	return env
}

// endScriptSpan records how the script ended: process.exit.code, and
// error.type for a failure.
func endScriptSpan(span trace.Span, out *outcome, err error) {
	if !span.IsRecording() {
		return
	}
	if out != nil {
		span.SetAttributes(semconv.ProcessExitCode.Int(out.exitCode))
		if out.exitCode != 0 || out.timedOut {
			span.SetStatus(codes.Error, "script failed")
			span.SetAttributes(semconv.ErrorType.String("exit_code"))
		}
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
}
