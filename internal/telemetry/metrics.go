package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// Names of the metrics, as OpenTelemetry instruments; Prometheus sees them
// with dots as underscores, the unit and _total added:
// agent_tool_calls_total, agent_tool_call_duration_seconds,
// agent_tool_errors_total, agent_plugin_starts_total and
// agent_plugin_restarts_total.
const (
	MetricCalls    = "agent.tool.calls"
	MetricDuration = "agent.tool.call.duration"
	MetricErrors   = "agent.tool.errors"
	MetricStarts   = "agent.plugin.starts"
	MetricRestarts = "agent.plugin.restarts"
)

// Labels of the metrics. A call whose name resolved to no tool has
// neither skill nor tool (a client's made-up names must not make series).
const (
	LabelSkill = "skill"
	LabelTool  = "tool"
	LabelCode  = "code" // CodeOK, or the error code of the outcome
)

// CodeOK is the code label of a call that succeeded.
const CodeOK = "ok"

// DurationBuckets are the upper bounds, in seconds, of the call latency
// histogram: from a warm in-process call (about a millisecond) to the
// default call deadline (five minutes).
var DurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Metrics counts tool calls and plugin starts and serves them in the
// Prometheus text format. It is built only by a long-running server
// (agent mcp --http): a CLI run or a stdio server makes none, and so
// pays nothing for it. Safe for concurrent use.
type Metrics struct {
	provider *sdkmetric.MeterProvider
	handler  http.Handler

	calls    metric.Int64Counter
	duration metric.Float64Histogram
	errors   metric.Int64Counter
	starts   metric.Int64Counter
	restarts metric.Int64Counter
}

// NewMetrics builds the meter provider and its Prometheus exporter, on a
// registry of its own (never the process-wide default one), with the Go
// runtime and process collectors beside it. version is the agent's,
// reported as service.version; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES apply.
func NewMetrics(ctx context.Context, version string) (*Metrics, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("register the Go collector: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("register the process collector: %w", err)
	}
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithoutScopeInfo(),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
	)
	if err != nil {
		return nil, fmt.Errorf("create the Prometheus exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "agent"), attribute.String("service.version", version)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("describe the metrics resource: %w", err)
	}
	m := &Metrics{
		provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res)),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			// One failing collector must not hide the others.
			ErrorHandling: promhttp.ContinueOnError,
		}),
	}
	meter := m.provider.Meter("github.com/agentskills/agent")
	errs := make([]error, 0, 5)
	var e error
	m.calls, e = meter.Int64Counter(MetricCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by skill, tool and outcome code (ok or the error code)."))
	errs = append(errs, e)
	m.duration, e = meter.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("How long tool calls took, by skill and tool."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...))
	errs = append(errs, e)
	m.errors, e = meter.Int64Counter(MetricErrors, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls that failed, by error code."))
	errs = append(errs, e)
	m.starts, e = meter.Int64Counter(MetricStarts, metric.WithUnit("{start}"),
		metric.WithDescription("Plugin processes started, restarts included, by skill."))
	errs = append(errs, e)
	m.restarts, e = meter.Int64Counter(MetricRestarts, metric.WithUnit("{start}"),
		metric.WithDescription("Plugin processes started again after one had run (a crash, a kill at a deadline or an idle stop), by skill."))
	errs = append(errs, e)
	for _, e := range errs {
		if e != nil {
			_ = m.provider.Shutdown(ctx)
			return nil, fmt.Errorf("create an instrument: %w", e)
		}
	}
	return m, nil
}

// Handler serves the metrics in the Prometheus exposition format; nil
// for a nil *Metrics (no metrics). It checks nothing: put it behind the
// server's authentication.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return nil
	}
	return m.handler
}

// Call records one finished tool call. skill and tool are "" for a name
// that resolved to nothing; code is "" on success.
func (m *Metrics) Call(ctx context.Context, skill, tool, code string, took time.Duration) {
	if code == "" {
		code = CodeOK
	}
	where := attribute.NewSet(attribute.String(LabelSkill, skill), attribute.String(LabelTool, tool))
	m.calls.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(
		attribute.String(LabelSkill, skill), attribute.String(LabelTool, tool), attribute.String(LabelCode, code))))
	m.duration.Record(ctx, took.Seconds(), metric.WithAttributeSet(where))
	if code != CodeOK {
		m.errors.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(attribute.String(LabelCode, code))))
	}
}

// PluginStarted records one plugin process start; restart says a process
// of that skill had run before.
func (m *Metrics) PluginStarted(ctx context.Context, skill string, restart bool) {
	set := metric.WithAttributeSet(attribute.NewSet(attribute.String(LabelSkill, skill)))
	m.starts.Add(ctx, 1, set)
	if restart {
		m.restarts.Add(ctx, 1, set)
	}
}

// Shutdown stops the meter provider; Handler serves nothing new after it.
func (m *Metrics) Shutdown(ctx context.Context) error { return m.provider.Shutdown(ctx) }
