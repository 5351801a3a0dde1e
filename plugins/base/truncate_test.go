package base

import (
	"fmt"
	"strings"
	"testing"
)

func TestMiddleOut(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := 1; i <= 1000; i++ {
		lines = append(lines, fmt.Sprintf("line %04d", i))
	}
	long := strings.Join(lines, "\n") + "\n"
	tests := []struct {
		name, in       string
		max            int
		prefix, suffix string
		marker         string
		writes         int // write in this many pieces
	}{
		{name: "fits", in: "short\n", max: 100, prefix: "short\n", suffix: "short\n"},
		{name: "exactly fits", in: strings.Repeat("x", 100), max: 100, prefix: strings.Repeat("x", 100)},
		{name: "lines", in: long, max: 200, prefix: "line 0001\n", suffix: "line 1000\n", marker: "lines ("},
		{name: "many small writes", in: long, max: 200, prefix: "line 0001\n", suffix: "line 1000\n", marker: "bytes) left out", writes: 1000},
		{name: "one long line", in: strings.Repeat("y", 5000), max: 100, prefix: "yyyy", suffix: "yyyy", marker: "[... 0 lines ("},
		{name: "utf-8 not cut", in: strings.Repeat("é", 1000), max: 101, prefix: "é", suffix: "é", marker: "left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMiddleOut(tt.max)
			n := max(tt.writes, 1)
			step := (len(tt.in) + n - 1) / n
			for i := 0; i < len(tt.in); i += step {
				m.Write([]byte(tt.in[i:min(i+step, len(tt.in))]))
			}
			got := m.String()
			if !strings.HasPrefix(got, tt.prefix) || !strings.HasSuffix(got, tt.suffix) || !strings.Contains(got, tt.marker) {
				t.Fatalf("got %q", got)
			}
			if tt.marker == "" && got != tt.in {
				t.Fatalf("changed output that fits: %q", got)
			}
			if len(got) > tt.max+80 {
				t.Errorf("kept %d bytes for a %d limit", len(got), tt.max)
			}
			if strings.ContainsRune(got, '\uFFFD') {
				t.Errorf("a rune was cut: %q", got)
			}
		})
	}
	// The marker's counts add up: kept lines + left-out lines = all lines.
	got := MiddleOut(long, 200)
	var left, bytes int
	i := strings.Index(got, "[... ")
	fmt.Sscanf(got[i:], "[... %d lines (%d bytes)", &left, &bytes)
	kept := strings.Count(got, "line ")
	if kept+left != 1000 || bytes+len(got)-len(got[i:strings.Index(got, "...]\n")+5]) != len(long) {
		t.Errorf("kept %d + left out %d lines != 1000, or bytes %d do not add up: %q", kept, left, bytes, got)
	}
}
