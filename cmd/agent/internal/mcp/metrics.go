package mcp

import (
	"context"
	"time"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/telemetry"
)

// MetricsPath is where ServeHTTP serves HTTPOptions.Metrics, behind the
// same bearer token as Path.
const MetricsPath = "/metrics"

// CallMetrics is the workspace observer that records every call's
// outcome and latency in m (agent mcp --http).
func CallMetrics(m *telemetry.Metrics) workspace.CallObserver { return callMetrics{m} }

type callMetrics struct{ m *telemetry.Metrics }

type callStartKey struct{}

func (c callMetrics) CallStart(ctx context.Context, _ workspace.CallEvent) context.Context {
	return context.WithValue(ctx, callStartKey{}, time.Now())
}

func (c callMetrics) CallEnd(ctx context.Context, ev workspace.CallEvent, out workspace.Outcome) {
	var took time.Duration
	if t0, ok := ctx.Value(callStartKey{}).(time.Time); ok {
		took = time.Since(t0)
	}
	c.m.Call(ctx, ev.Skill, ev.Tool, out.Code, took)
}
