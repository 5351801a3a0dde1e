package telemetry

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestWanted(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want bool
	}{
		{"nothing set", nil, false},
		{"service name alone asks for no exporter", map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
		{"file exporter", map[string]string{"OTEL_TRACES_EXPORTER": "file"}, true},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{"protocol", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true},
		{"disabled wins", map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, false},
		{"disabled false", map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "console"}, true},
		{"none beats an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Wanted(env(tt.env)); got != tt.want {
				t.Errorf("Wanted = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStartOffBuildsNothing(t *testing.T) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	home := t.TempDir()
	p, err := Start(context.Background(), Options{Home: home, LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Enabled() {
		t.Fatal("tracing on with no OTEL_* variable")
	}
	_, span := otel.Tracer(ScopeName).Start(context.Background(), "x")
	if span.IsRecording() {
		t.Error("span records with tracing off")
	}
	span.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(TracesDir(home)); !os.IsNotExist(err) {
		t.Errorf("traces folder made with tracing off: %v", err)
	}
	if f := otel.GetTextMapPropagator().Fields(); len(f) == 0 || f[0] != "traceparent" {
		t.Errorf("propagator fields %v, want traceparent: trace context is set even with tracing off", f)
	}
}

func TestFileExporterRoundTrip(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OTEL_TRACES_EXPORTER", "file")
	t.Setenv("OTEL_SERVICE_NAME", "agent-test")
	p, err := Start(context.Background(), Options{Home: home, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	tr := otel.Tracer(ScopeName)
	ctx, root := tr.Start(context.Background(), "agent call")
	_, child := tr.Start(ctx, "execute_tool hello")
	child.SetAttributes(attribute.String("gen_ai.tool.name", "hello"))
	child.End()
	root.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	traces, err := ReadTraces(TracesDir(home))
	if err != nil {
		t.Fatal(err)
	}
	if len(traces) != 1 || len(traces[0].Spans) != 2 {
		t.Fatalf("traces = %+v, want one with two spans", traces)
	}
	r, c := traces[0].Spans[0], traces[0].Spans[1]
	if r.Name != "agent call" || c.Name != "execute_tool hello" || c.ParentID != r.SpanID || r.ParentID != "" {
		t.Errorf("tree wrong: root %+v child %+v", r, c)
	}
	if c.Attrs["gen_ai.tool.name"] != "hello" || r.Service != "agent-test" {
		t.Errorf("attributes %v service %q", c.Attrs, r.Service)
	}
	if root.SpanContext().TraceID().String() != traces[0].ID {
		t.Errorf("trace id %s, want %s", traces[0].ID, root.SpanContext().TraceID())
	}
}

func TestStartBadExporter(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkinn")
	_, err := Start(context.Background(), Options{Home: t.TempDir()})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("err = %v, want ErrConfig", err)
	}
}

func TestPrune(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.jsonl", "b.jsonl", "c.jsonl", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	prune(dir, 1)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 2 || names[0] != "c.jsonl" || names[1] != "keep.txt" {
		t.Errorf("left %v, want the newest trace file and the other file", names)
	}
}

func TestParseSpansSkipsBadLines(t *testing.T) {
	data := []byte(`{"trace_id":"a","span_id":"b","name":"x"}
not json
{"trace_id":"","span_id":"c"}
{"trace_id":"a","span_id":"d","name":"y"`)
	spans := ParseSpans(data)
	if len(spans) != 1 || spans[0].Name != "x" {
		t.Errorf("spans = %+v, want the one whole span", spans)
	}
}

func FuzzParseSpans(f *testing.F) {
	f.Add([]byte(`{"trace_id":"a","span_id":"b","name":"x","start":"2026-01-01T00:00:00Z","attributes":{"k":1}}` + "\n"))
	f.Add([]byte("{}\n\n[1]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range ParseSpans(data) {
			if s.TraceID == "" || s.SpanID == "" {
				t.Fatalf("span without ids: %+v", s)
			}
		}
	})
}

func TestDecodeOTLP(t *testing.T) {
	tid := bytes.Repeat([]byte{1}, 16)
	td := &tracepb.TracesData{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "plugin"}}}}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "s"}, Spans: []*tracepb.Span{
			{TraceId: tid, SpanId: bytes.Repeat([]byte{2}, 8), ParentSpanId: bytes.Repeat([]byte{3}, 8), Name: "greet",
				Kind: tracepb.Span_SPAN_KIND_SERVER, StartTimeUnixNano: 1e9, EndTimeUnixNano: 3e9,
				Attributes: []*commonpb.KeyValue{{Key: "n", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: 7}}}},
				Status:     &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "bad"}},
			{TraceId: []byte{1}, SpanId: bytes.Repeat([]byte{4}, 8), Name: "no trace id"},
		}}},
	}}}
	data, err := proto.Marshal(td)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := DecodeOTLP(data, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if len(spans) != 1 {
		t.Fatalf("decoded %d spans, want the one with ids", len(spans))
	}
	r := record(spans[0])
	if r.Name != "greet" || r.ParentID != "0303030303030303" || r.Kind != "server" || r.Duration() != 2*time.Second ||
		r.Status != "error" || r.Message != "bad" || r.Service != "hello" || r.Attrs["n"] != int64(7) {
		t.Errorf("decoded %+v", r)
	}
	if _, err := DecodeOTLP([]byte{0xff, 0xff}, ""); err == nil {
		t.Error("garbage decoded without an error")
	}
}

func FuzzDecodeOTLP(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		spans, err := DecodeOTLP(data, "x")
		if err != nil && spans != nil {
			t.Fatal("spans and an error")
		}
		for _, s := range spans {
			if !s.SpanContext().IsValid() {
				t.Fatalf("invalid span context %v", s.SpanContext())
			}
		}
	})
}
