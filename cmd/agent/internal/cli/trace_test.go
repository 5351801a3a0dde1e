package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/telemetry"
)

func TestDrawTrace(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	span := func(id, parent, name string, start, dur time.Duration, attrs map[string]any) telemetry.Span {
		return telemetry.Span{TraceID: "abc", SpanID: id, ParentID: parent, Name: name,
			Start: t0.Add(start), End: t0.Add(start + dur), Attrs: attrs}
	}
	tr := telemetry.Trace{ID: "abc", Spans: []telemetry.Span{
		span("1", "", "agent call", 0, 900*time.Millisecond, map[string]any{"process.exit.code": 0}),
		span("2", "1", "execute_tool greet", 10*time.Millisecond, 800*time.Millisecond, map[string]any{"gen_ai.skill.name": "hello"}),
		span("3", "2", "plugin launch hello", 11*time.Millisecond, 500*time.Millisecond, map[string]any{"agent.plugin.start": "cold"}),
		span("4", "2", "skill.v1.Skill/Invoke", 520*time.Millisecond, 250*time.Millisecond, nil),
		span("5", "4", "greet", 530*time.Millisecond, 1500*time.Microsecond, nil),
		span("6", "gone", "orphan", 600*time.Millisecond, time.Millisecond, nil),
	}}
	var out bytes.Buffer
	drawTrace(&out, tr)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	want := []string{
		"agent call [exit=0]",
		"└─ execute_tool greet [skill=hello]",
		"   ├─ plugin launch hello [start=cold]",
		"   └─ skill.v1.Skill/Invoke",
		"      └─ greet",
		"orphan",
	}
	if len(lines) != len(want)+1 {
		t.Fatalf("drew %d lines, want %d:\n%s", len(lines), len(want)+1, out.String())
	}
	if !strings.HasPrefix(lines[0], "trace abc  ") || !strings.HasSuffix(lines[0], "  900ms") {
		t.Errorf("header %q", lines[0])
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i+1], w) {
			t.Errorf("line %d = %q, want it to start %q", i+1, lines[i+1], w)
		}
	}
	if !strings.HasSuffix(lines[5], "1.5ms  +530ms") {
		t.Errorf("greet line %q, want duration 1.5ms at +530ms", lines[5])
	}
}

func TestFindTrace(t *testing.T) {
	traces := []telemetry.Trace{{ID: "aa11"}, {ID: "aa22"}, {ID: "bb33"}}
	tests := []struct {
		name, id, want, err string
	}{
		{"whole id", "bb33", "bb33", ""},
		{"prefix", "aa2", "aa22", ""},
		{"upper case", "BB", "bb33", ""},
		{"ambiguous", "aa", "", "2 traces start with aa"},
		{"none", "cc", "", "no trace cc among the 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findTrace(traces, tt.id)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got.ID != tt.want {
				t.Fatalf("got %q, %v; want %q", got.ID, err, tt.want)
			}
		})
	}
}
