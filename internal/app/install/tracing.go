package install

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/ground/semconv"
)

var tracer = otel.Tracer(semconv.Scope)

// startStepSpan starts the span of one install step of a skill, "build"
// or "describe", named {step} {skill} (SPEC §17: add, update and sync
// show fetch, build and describe under the command).
func startStepSpan(ctx context.Context, step, skill string) (context.Context, trace.Span) {
	ctx, span := tracer.Start(ctx, step+" "+skill)
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAISkillName.String(skill))
	}
	return ctx, span
}

func endStepSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetAttributes(semconv.ErrorType.String(stepErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

func stepErrorType(err error) string {
	switch {
	case errors.Is(err, plugbuild.ErrGoMissing):
		return "go_missing"
	case errors.Is(err, plugbuild.ErrBuild):
		return "build_failed"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return semconv.ErrorOther
}
