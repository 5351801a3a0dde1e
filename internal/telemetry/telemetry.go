package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
)

// ScopeName is the instrumentation scope of the spans agent makes.
const ScopeName = semconv.Scope

// ExporterFile is the OTEL_TRACES_EXPORTER value of this package's exporter.
const ExporterFile = "file"

// ErrConfig is wrapped by Start when the OTEL_* environment names an
// exporter or protocol that does not exist.
var ErrConfig = errors.New("bad OpenTelemetry configuration")

// Options are what the process knows that the environment does not.
type Options struct {
	// Home is $AGENT_HOME: the file exporter writes to Home/traces.
	Home string
	// ServiceName is service.name unless OTEL_SERVICE_NAME says otherwise;
	// "" is "agent".
	ServiceName string
	// Version is service.version.
	Version string
	// LookupEnv reads the environment; nil is os.LookupEnv. The exporters
	// themselves read the process environment.
	LookupEnv func(string) (string, bool)
}

// Provider is the tracing of one process. The zero value and nil are a
// Provider that traces nothing.
type Provider struct {
	tp *sdktrace.TracerProvider
}

// Enabled reports whether spans are recorded and exported.
func (p *Provider) Enabled() bool { return p != nil && p.tp != nil }

// Shutdown flushes the spans not yet exported and stops the exporter. A
// command calls it before the process exits.
func (p *Provider) Shutdown(ctx context.Context) error {
	if !p.Enabled() {
		return nil
	}
	exporting.Store(nil)
	if err := p.tp.Shutdown(ctx); err != nil {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}

// Wanted reports whether the environment asks for traces: OTEL_SDK_DISABLED
// is not true, and OTEL_TRACES_EXPORTER names an exporter other than none,
// or an OTLP endpoint or protocol is set.
func Wanted(lookupEnv func(string) (string, bool)) bool {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	get := func(k string) string { v, _ := lookupEnv(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if e := get("OTEL_TRACES_EXPORTER"); e != "" {
		return e != "none"
	}
	for _, k := range []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	} {
		if get(k) != "" {
			return true
		}
	}
	return false
}

// Start sets the global propagator to W3C trace context and, when the
// environment asks for traces (Wanted), the global tracer provider with the
// exporter the environment names (see newExporter). Without an OTEL_* variable that asks, it builds
// nothing and the global tracer stays a no-op.
func Start(ctx context.Context, opts Options) (*Provider, error) {
	otel.SetTextMapPropagator(propagation.TraceContext{})
	if !Wanted(opts.LookupEnv) {
		return &Provider{}, nil
	}
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	exp, err := newExporter(ctx, lookupEnv, TracesDir(opts.Home))
	if err != nil {
		return &Provider{}, err
	}
	name := opts.ServiceName
	if name == "" {
		name = "agent"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if opts.Version != "" {
		attrs = append(attrs, attribute.String("service.version", opts.Version))
	}
	// Later detectors win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// over our defaults.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithFromEnv())
	if err != nil && res == nil {
		res = resource.NewSchemaless(attrs...)
	}
	bsp := sdktrace.NewBatchSpanProcessor(exp)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(bsp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	exporting.Store(&bsp)
	return &Provider{tp: tp}, nil
}

// newExporter picks the exporter as contrib's autoexport does for traces
// (OTEL_TRACES_EXPORTER otlp by default, or console; the OTLP protocol from
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then OTEL_EXPORTER_OTLP_PROTOCOL,
// http/protobuf by default), plus file. autoexport itself is not linked: it
// brings the metrics and logs exporters and Prometheus's client, whose
// package inits alone cost every command, traced or not, about 2 ms
// (docs/design.md).
func newExporter(ctx context.Context, lookupEnv func(string) (string, bool), dir string) (sdktrace.SpanExporter, error) {
	get := func(k string) string { v, _ := lookupEnv(k); return strings.TrimSpace(v) }
	switch name := get("OTEL_TRACES_EXPORTER"); name {
	case "", "otlp":
	case ExporterFile:
		if dir == "" {
			return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=file needs AGENT_HOME", ErrConfig)
		}
		return NewFileExporter(dir), nil
	case "console":
		return stdouttrace.New()
	default:
		return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%s: use otlp, console, file or none", ErrConfig, name)
	}
	proto := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%w: OTLP protocol %q: use http/protobuf or grpc", ErrConfig, proto)
	}
}
