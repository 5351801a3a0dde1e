package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// KeepFiles is how many trace files TracesDir keeps: the file exporter
// removes the oldest beyond it when it opens a new one. Traces here are a
// local view for `agent trace`, not an archive; a backend keeps history.
const KeepFiles = 200

// TracesDir is where the file exporter of home writes.
func TracesDir(home string) string {
	if home == "" {
		return ""
	}
	return filepath.Join(home, "traces")
}

// Span is one span as the file exporter writes it: a JSON object per line.
type Span struct {
	TraceID  string         `json:"trace_id"`
	SpanID   string         `json:"span_id"`
	ParentID string         `json:"parent_span_id,omitempty"`
	Name     string         `json:"name"`
	Kind     string         `json:"kind,omitempty"`
	Start    time.Time      `json:"start"`
	End      time.Time      `json:"end"`
	Status   string         `json:"status,omitempty"` // "error" or ""
	Message  string         `json:"status_message,omitempty"`
	Service  string         `json:"service,omitempty"`
	Attrs    map[string]any `json:"attributes,omitempty"`
}

// Duration is how long the span ran.
func (s Span) Duration() time.Duration { return s.End.Sub(s.Start) }

// FileExporter writes spans to one new file per process under a folder,
// so that processes exporting at once (a host and the MCP server) never
// share a file.
type FileExporter struct {
	dir string

	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	done bool
}

// NewFileExporter returns an exporter that writes under dir, which it
// creates on the first export.
func NewFileExporter(dir string) *FileExporter { return &FileExporter{dir: dir} }

// ExportSpans appends spans to this process's file.
func (e *FileExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return nil
	}
	if e.f == nil {
		if err := e.open(); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(e.w)
	for _, s := range spans {
		if err := enc.Encode(record(s)); err != nil {
			return fmt.Errorf("write trace file: %w", err)
		}
	}
	if err := e.w.Flush(); err != nil {
		return fmt.Errorf("write trace file %s: %w", e.f.Name(), err)
	}
	return nil
}

// Shutdown closes the file.
func (e *FileExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.done = true
	if e.f == nil {
		return nil
	}
	err := e.w.Flush()
	if cerr := e.f.Close(); err == nil {
		err = cerr
	}
	e.f = nil
	return err
}

func (e *FileExporter) open() error {
	if err := os.MkdirAll(e.dir, 0o700); err != nil {
		return fmt.Errorf("create traces folder: %w", err)
	}
	prune(e.dir, KeepFiles-1)
	// Names sort by time, so that the newest file is the last.
	name := fmt.Sprintf("%s-%d.jsonl", time.Now().UTC().Format("20060102T150405.000000000"), os.Getpid())
	f, err := os.OpenFile(filepath.Join(e.dir, name), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("create trace file: %w", err)
	}
	e.f, e.w = f, bufio.NewWriter(f)
	return nil
}

// prune removes the oldest trace files beyond keep.
func prune(dir string, keep int) {
	files := traceFiles(dir)
	for len(files) > keep {
		os.Remove(files[0])
		files = files[1:]
	}
}

func traceFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".jsonl") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(files)
	return files
}

func record(s sdktrace.ReadOnlySpan) Span {
	r := Span{
		TraceID: s.SpanContext().TraceID().String(),
		SpanID:  s.SpanContext().SpanID().String(),
		Name:    s.Name(),
		Kind:    s.SpanKind().String(),
		Start:   s.StartTime(),
		End:     s.EndTime(),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		r.ParentID = p.SpanID().String()
	}
	if st := s.Status(); st.Code.String() == "Error" {
		r.Status, r.Message = "error", st.Description
	}
	if res := s.Resource(); res != nil {
		if v, ok := res.Set().Value("service.name"); ok {
			r.Service = v.AsString()
		}
	}
	if attrs := s.Attributes(); len(attrs) > 0 {
		r.Attrs = make(map[string]any, len(attrs))
		for _, kv := range attrs {
			r.Attrs[string(kv.Key)] = value(kv.Value)
		}
	}
	return r
}

func value(v attribute.Value) any {
	switch v.Type() {
	case attribute.BOOL:
		return v.AsBool()
	case attribute.INT64:
		return v.AsInt64()
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.STRING:
		return v.AsString()
	default:
		return v.Emit()
	}
}

// Trace is the spans of one trace ID, in start order.
type Trace struct {
	ID    string
	Spans []Span
}

// Start is when the trace's first span started.
func (t Trace) Start() time.Time { return t.Spans[0].Start }

// ReadTraces reads every trace under dir, oldest first. A line that is not a
// span (a file cut short by a killed process) is skipped: the rest of the
// traces are still worth drawing.
func ReadTraces(dir string) ([]Trace, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("read traces: %w", err)
	}
	byID := map[string]*Trace{}
	for _, name := range traceFiles(dir) {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read traces: %w", err)
		}
		for _, s := range ParseSpans(data) {
			t := byID[s.TraceID]
			if t == nil {
				t = &Trace{ID: s.TraceID}
				byID[s.TraceID] = t
			}
			t.Spans = append(t.Spans, s)
		}
	}
	traces := make([]Trace, 0, len(byID))
	for _, t := range byID {
		slices.SortStableFunc(t.Spans, func(a, b Span) int { return a.Start.Compare(b.Start) })
		traces = append(traces, *t)
	}
	slices.SortFunc(traces, func(a, b Trace) int {
		if c := a.Start().Compare(b.Start()); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return traces, nil
}

// ParseSpans decodes the span lines of one trace file, skipping the lines
// that are not a span with a trace and span ID.
func ParseSpans(data []byte) []Span {
	var spans []Span
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var s Span
		if json.Unmarshal(line, &s) != nil || s.TraceID == "" || s.SpanID == "" {
			continue
		}
		spans = append(spans, s)
	}
	return spans
}
