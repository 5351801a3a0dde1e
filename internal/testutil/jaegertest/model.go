package jaegertest

import (
	"fmt"
	"sort"
	"strings"
)

// Trace is one trace as Jaeger's query API returns it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     int64       `json:"startTime"` // µs since the epoch
	Duration      int64       `json:"duration"`  // µs
	Tags          []Tag       `json:"tags"`
	ProcessID     string      `json:"processID"`
}

// Reference links a span to another; CHILD_OF names the parent.
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// Tag is a span attribute (or one Jaeger derives, such as span.kind).
type Tag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Process is the resource a span came from.
type Process struct {
	ServiceName string `json:"serviceName"`
	Tags        []Tag  `json:"tags"`
}

// Named returns the spans called name.
func (tr Trace) Named(name string) []Span {
	var out []Span
	for _, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, s)
		}
	}
	return out
}

// Parent is the span's CHILD_OF reference's span ID, "" for a root.
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// Tag is the value of the span's tag key, nil when it has none.
func (s Span) Tag(key string) any {
	for _, t := range s.Tags {
		if t.Key == key {
			return t.Value
		}
	}
	return nil
}

// Service is the service.name of the process a span came from.
func (tr Trace) Service(s Span) string { return tr.Processes[s.ProcessID].ServiceName }

// Children are the spans whose parent is the span with ID id.
func (tr Trace) Children(id string) []Span {
	var out []Span
	for _, s := range tr.Spans {
		if s.Parent() == id {
			out = append(out, s)
		}
	}
	return out
}

// String draws the trace as an indented tree with each span's service, for
// failure messages.
func (tr Trace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "trace %s (%d spans)\n", tr.TraceID, len(tr.Spans))
	ids := map[string]bool{}
	for _, s := range tr.Spans {
		ids[s.SpanID] = true
	}
	var draw func(s Span, depth int)
	draw = func(s Span, depth int) {
		fmt.Fprintf(&b, "%s%s [%s] %s\n", strings.Repeat("  ", depth+1), s.OperationName, tr.Service(s), s.SpanID)
		kids := tr.Children(s.SpanID)
		sort.Slice(kids, func(i, j int) bool { return kids[i].StartTime < kids[j].StartTime })
		for _, k := range kids {
			draw(k, depth+1)
		}
	}
	for _, s := range tr.Spans {
		if p := s.Parent(); p == "" || !ids[p] {
			if p != "" {
				fmt.Fprintf(&b, "  (parent %s not in the trace)\n", p)
			}
			draw(s, 0)
		}
	}
	return b.String()
}
