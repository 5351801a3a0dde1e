// Package spans keeps a plugin's finished spans until the reply of the call
// they belong to carries them to the host, encoded as OTLP protobuf.
//
// A plugin runs with the host's environment cut away (no OTEL_* settings)
// and may be stopped before any batch exporter flushes, so it exports
// nothing itself: the host hands what arrives to its own exporter.
package spans

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// MaxPerCall bounds the spans one reply carries: a plugin that makes a span
// per line of a large file must not blow the reply up. The rest are
// dropped and counted in the last span's agent.spans.dropped attribute.
const MaxPerCall = 512

// Collector is a SpanProcessor that holds the ended spans of the traces
// that calls in flight belong to.
type Collector struct {
	mu     sync.Mutex
	active map[trace.TraceID]int
	ended  map[trace.TraceID][]sdktrace.ReadOnlySpan
	sent   map[trace.SpanID]bool
}

var _ sdktrace.SpanProcessor = (*Collector)(nil)

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{active: map[trace.TraceID]int{}, ended: map[trace.TraceID][]sdktrace.ReadOnlySpan{}, sent: map[trace.SpanID]bool{}}
}

// Begin marks a call of trace id in flight: spans of that trace are kept
// until its End.
func (c *Collector) Begin(id trace.TraceID) {
	c.mu.Lock()
	c.active[id]++
	c.mu.Unlock()
}

// End closes a call of the trace of span (the call's own span, still
// open) and returns the OTLP encoding of the trace's ended spans and of a
// snapshot of span ended now, or nil when there are none.
func (c *Collector) End(span trace.Span) []byte {
	id := span.SpanContext().TraceID()
	c.mu.Lock()
	got := c.ended[id]
	delete(c.ended, id)
	if c.active[id]--; c.active[id] <= 0 {
		delete(c.active, id)
	}
	if ro, ok := span.(sdktrace.ReadOnlySpan); ok && span.IsRecording() {
		stub := tracetest.SpanStubFromReadOnlySpan(ro)
		stub.EndTime = time.Now()
		got = append(got, stub.Snapshot())
		c.sent[span.SpanContext().SpanID()] = true
	}
	c.mu.Unlock()
	if len(got) == 0 {
		return nil
	}
	data, err := proto.Marshal(Encode(got))
	if err != nil {
		return nil
	}
	return data
}

// OnStart does nothing.
func (c *Collector) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd keeps s when its trace has a call in flight.
func (c *Collector) OnEnd(s sdktrace.ReadOnlySpan) {
	id := s.SpanContext().TraceID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sent[s.SpanContext().SpanID()] {
		delete(c.sent, s.SpanContext().SpanID()) // its snapshot went with the reply
		return
	}
	if c.active[id] > 0 {
		c.ended[id] = append(c.ended[id], s)
	}
}

// Shutdown does nothing.
func (c *Collector) Shutdown(context.Context) error { return nil }

// ForceFlush does nothing.
func (c *Collector) ForceFlush(context.Context) error { return nil }

// Encode turns spans into OTLP, at most MaxPerCall of them, grouped by
// resource and scope as OTLP wants.
func Encode(spans []sdktrace.ReadOnlySpan) *tracepb.TracesData {
	dropped := 0
	if len(spans) > MaxPerCall {
		dropped = len(spans) - MaxPerCall
		spans = spans[len(spans)-MaxPerCall:] // the call's own span is last
	}
	out := &tracepb.TracesData{}
	var rs *tracepb.ResourceSpans
	scopes := map[string]*tracepb.ScopeSpans{}
	for i, s := range spans {
		if rs == nil {
			rs = &tracepb.ResourceSpans{Resource: &resourcepb.Resource{}}
			if res := s.Resource(); res != nil {
				rs.Resource.Attributes = keyValues(res.Attributes())
			}
			out.ResourceSpans = append(out.ResourceSpans, rs)
		}
		scope := s.InstrumentationScope()
		ss := scopes[scope.Name]
		if ss == nil {
			ss = &tracepb.ScopeSpans{Scope: &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version}}
			scopes[scope.Name] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		sc := s.SpanContext()
		tid, sid := sc.TraceID(), sc.SpanID()
		p := &tracepb.Span{
			TraceId:           tid[:],
			SpanId:            sid[:],
			TraceState:        sc.TraceState().String(),
			Name:              s.Name(),
			Kind:              tracepb.Span_SpanKind(s.SpanKind()),
			StartTimeUnixNano: uint64(s.StartTime().UnixNano()),
			EndTimeUnixNano:   uint64(s.EndTime().UnixNano()),
			Attributes:        keyValues(s.Attributes()),
			Flags:             uint32(sc.TraceFlags()),
		}
		if i == len(spans)-1 && dropped > 0 {
			p.Attributes = append(p.Attributes, keyValue(attribute.Int("agent.spans.dropped", dropped)))
		}
		if ps := s.Parent(); ps.SpanID().IsValid() {
			psid := ps.SpanID()
			p.ParentSpanId = psid[:]
		}
		switch st := s.Status(); st.Code {
		case codes.Error:
			p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: st.Description}
		case codes.Ok:
			p.Status = &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK}
		}
		for _, e := range s.Events() {
			p.Events = append(p.Events, &tracepb.Span_Event{Name: e.Name, TimeUnixNano: uint64(e.Time.UnixNano()), Attributes: keyValues(e.Attributes)})
		}
		ss.Spans = append(ss.Spans, p)
	}
	return out
}

func keyValues(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = keyValue(kv)
	}
	return out
}

func keyValue(kv attribute.KeyValue) *commonpb.KeyValue {
	v := &commonpb.AnyValue{}
	switch kv.Value.Type() {
	case attribute.BOOL:
		v.Value = &commonpb.AnyValue_BoolValue{BoolValue: kv.Value.AsBool()}
	case attribute.INT64:
		v.Value = &commonpb.AnyValue_IntValue{IntValue: kv.Value.AsInt64()}
	case attribute.FLOAT64:
		v.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: kv.Value.AsFloat64()}
	case attribute.STRING:
		v.Value = &commonpb.AnyValue_StringValue{StringValue: kv.Value.AsString()}
	default:
		v.Value = &commonpb.AnyValue_StringValue{StringValue: kv.Value.Emit()}
	}
	return &commonpb.KeyValue{Key: string(kv.Key), Value: v}
}
