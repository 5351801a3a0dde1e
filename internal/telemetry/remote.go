package telemetry

import (
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exporting is the span processor of the running Provider, nil when tracing
// is off: Import hands it the spans plugins send back.
var exporting atomic.Pointer[sdktrace.SpanProcessor]

// Import hands spans that a plugin returned with a reply (OTLP protobuf
// TracesData, sdk.MetadataSpans) to this process's exporter, as spans of
// service. With tracing off it does nothing. A payload that is not OTLP is
// an error; spans without a trace or span ID are skipped.
func Import(data []byte, service string) error {
	p := exporting.Load()
	if p == nil || len(data) == 0 {
		return nil
	}
	spans, err := DecodeOTLP(data, service)
	if err != nil {
		return err
	}
	for _, s := range spans {
		(*p).OnEnd(s)
	}
	return nil
}

// DecodeOTLP parses OTLP protobuf TracesData into spans; service, when not
// "", replaces the resource's service.name.
func DecodeOTLP(data []byte, service string) ([]sdktrace.ReadOnlySpan, error) {
	var td tracepb.TracesData
	if err := proto.Unmarshal(data, &td); err != nil {
		return nil, fmt.Errorf("decode plugin spans: %w", err)
	}
	var out []sdktrace.ReadOnlySpan
	for _, rs := range td.GetResourceSpans() {
		attrs := attrsOf(rs.GetResource().GetAttributes())
		if service != "" {
			attrs = append(attrs, attribute.String("service.name", service))
		}
		res := resource.NewSchemaless(attrs...)
		for _, ss := range rs.GetScopeSpans() {
			scope := instrumentation.Scope{Name: ss.GetScope().GetName(), Version: ss.GetScope().GetVersion()}
			for _, s := range ss.GetSpans() {
				tid, ok1 := traceID(s.GetTraceId())
				sid, ok2 := spanID(s.GetSpanId())
				if !ok1 || !ok2 {
					continue
				}
				stub := tracetest.SpanStub{
					Name: s.GetName(),
					SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
						TraceID: tid, SpanID: sid, TraceFlags: trace.TraceFlags(s.GetFlags()&0xff) | trace.FlagsSampled,
					}),
					SpanKind:             trace.SpanKind(s.GetKind()),
					StartTime:            time.Unix(0, int64(s.GetStartTimeUnixNano())),
					EndTime:              time.Unix(0, int64(s.GetEndTimeUnixNano())),
					Attributes:           attrsOf(s.GetAttributes()),
					Resource:             res,
					InstrumentationScope: scope,
				}
				if pid, ok := spanID(s.GetParentSpanId()); ok {
					stub.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid, TraceFlags: trace.FlagsSampled, Remote: true})
				}
				switch s.GetStatus().GetCode() {
				case tracepb.Status_STATUS_CODE_ERROR:
					stub.Status = sdktrace.Status{Code: codes.Error, Description: s.GetStatus().GetMessage()}
				case tracepb.Status_STATUS_CODE_OK:
					stub.Status = sdktrace.Status{Code: codes.Ok}
				}
				for _, e := range s.GetEvents() {
					stub.Events = append(stub.Events, sdktrace.Event{Name: e.GetName(), Time: time.Unix(0, int64(e.GetTimeUnixNano())), Attributes: attrsOf(e.GetAttributes())})
				}
				out = append(out, stub.Snapshot())
			}
		}
	}
	return out, nil
}

func traceID(b []byte) (trace.TraceID, bool) {
	var id trace.TraceID
	if len(b) != len(id) {
		return id, false
	}
	copy(id[:], b)
	return id, id.IsValid()
}

func spanID(b []byte) (trace.SpanID, bool) {
	var id trace.SpanID
	if len(b) != len(id) {
		return id, false
	}
	copy(id[:], b)
	return id, id.IsValid()
}

func attrsOf(kvs []*commonpb.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		k, v := kv.GetKey(), kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			out = append(out, attribute.String(k, x.StringValue))
		case *commonpb.AnyValue_BoolValue:
			out = append(out, attribute.Bool(k, x.BoolValue))
		case *commonpb.AnyValue_IntValue:
			out = append(out, attribute.Int64(k, x.IntValue))
		case *commonpb.AnyValue_DoubleValue:
			out = append(out, attribute.Float64(k, x.DoubleValue))
		}
	}
	return out
}

// Enabled reports whether this process records and exports spans: Start
// found an exporter in the environment and its Provider is not shut down.
// Code that would do work only for tracing (an MCP request's span, a
// plugin connection's gRPC stats handlers) asks this first, so that
// tracing off costs a load.
func Enabled() bool { return exporting.Load() != nil }
