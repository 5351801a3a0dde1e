package run

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
)

var tracer = otel.Tracer(semconv.Scope)

// coordinatorAgent is gen_ai.agent.name of a run that no skill started.
const coordinatorAgent = "agent"

// startAgentSpan starts the GenAI invoke_agent span of one run (the
// coordinator, or a skill's delegated run inside its use_skill call). The
// agent runs in this process, so the span is INTERNAL (gen-ai-agent-spans.md).
func startAgentSpan(ctx context.Context, rs *RunSetting, spec string) (context.Context, trace.Span) {
	name := rs.Skill
	if name == "" {
		name = coordinatorAgent
	}
	ctx, span := tracer.Start(ctx, semconv.OpInvokeAgent+" "+name)
	if span.IsRecording() {
		provider, model := splitModel(spec)
		span.SetAttributes(
			semconv.GenAIOperationName.String(semconv.OpInvokeAgent),
			semconv.GenAIAgentName.String(name),
			semconv.GenAIAgentID.String(rs.RunID),
			semconv.GenAIConversationID.String(rs.JobID),
			semconv.GenAIProviderName.String(provider),
			semconv.GenAIRequestModel.String(model),
		)
	}
	return ctx, span
}

// endAgentSpan records the run's token use and, when it did not complete,
// its status as error.type.
func endAgentSpan(span trace.Span, usage Usage, status string, err error) {
	if span.IsRecording() {
		setUsage(span, usage)
		if err != nil {
			span.SetAttributes(semconv.ErrorType.String(status))
			span.SetStatus(codes.Error, err.Error())
		}
	}
	span.End()
}

// startChatSpan starts the GenAI chat span of one model request: CLIENT,
// named chat {gen_ai.request.model}.
func startChatSpan(ctx context.Context, spec string) (context.Context, trace.Span) {
	provider, model := splitModel(spec)
	ctx, span := tracer.Start(ctx, semconv.OpChat+" "+model, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(
			semconv.GenAIOperationName.String(semconv.OpChat),
			semconv.GenAIProviderName.String(provider),
			semconv.GenAIRequestModel.String(model),
		)
	}
	return ctx, span
}

// endChatSpan records what the provider reported: tokens, the finish
// reason, or the kind of failure.
func endChatSpan(span trace.Span, reply Reply, err error) {
	if span.IsRecording() {
		switch {
		case err != nil:
			span.SetAttributes(semconv.ErrorType.String(modelErrorType(err)))
			span.SetStatus(codes.Error, err.Error())
		default:
			setUsage(span, reply.Usage)
			if reply.StopReason != "" {
				span.SetAttributes(semconv.GenAIResponseFinishReasons.StringSlice([]string{reply.StopReason}))
			}
		}
	}
	span.End()
}

// setUsage sets gen_ai.usage.* when the provider reported tokens; a
// provider that reports none leaves both zero, which is no count.
func setUsage(span trace.Span, u Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	span.SetAttributes(semconv.GenAIUsageInput.Int64(u.InputTokens), semconv.GenAIUsageOutput.Int64(u.OutputTokens))
}

// splitModel splits PROVIDER/MODEL; the provider names are the ones
// gen_ai.provider.name lists (anthropic, openai).
func splitModel(spec string) (provider, model string) {
	provider, model, ok := strings.Cut(spec, "/")
	if !ok {
		return "", spec
	}
	return provider, model
}

// modelErrorTypes name the model clients' failures for error.type.
var modelErrorTypes = []struct {
	err  error
	name string
}{
	{ErrRateLimited, "rate_limited"},
	{ErrProviderDown, "provider_unavailable"},
	{ErrContextWindow, "context_window_exceeded"},
	{ErrUnknownModel, "unknown_model"},
	{ErrMissingKey, "unauthorized"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "timeout"},
}

func modelErrorType(err error) string {
	for _, e := range modelErrorTypes {
		if errors.Is(err, e.err) {
			return e.name
		}
	}
	return semconv.ErrorOther
}
