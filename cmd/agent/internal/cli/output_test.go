package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/workspace"
)

// tableOf builds a table of ncol columns from the comma-separated cells of
// s (a last short row is left out), through row as commands do.
func tableOf(s string, ncol int) *table {
	var b bytes.Buffer
	t := newTable(&b)
	cells := strings.Split(s, ",")
	for len(cells) >= ncol {
		t.row(cells[:ncol]...)
		cells = cells[ncol:]
	}
	return t
}

func TestTableLayout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cells string
		ncol  int
		want  string
	}{
		{"columns", "NAME,SKILL,DESCRIPTION,read_file,base,Read a file.,x,exec,Run.", 3,
			"NAME       SKILL  DESCRIPTION\nread_file  base   Read a file.\nx          exec   Run.\n"},
		{"runes count once", "héllo,a,b,c", 2, "héllo  a\nb      c\n"},
		{"one column", "a,bb", 1, "a\nbb\n"},
		{"empty cells", ",,x,", 2, "   \nx  \n"},
		{"escaped", "a\tb,\x1b[31m", 2, "a b  \\u001b[31m\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := tableOf(tc.cells, tc.ncol)
			if got := string(tb.layout()); got != tc.want {
				t.Errorf("layout:\n%q\nwant\n%q", got, tc.want)
			}
			if got := string(tb.tabwriter()); got != tc.want {
				t.Errorf("tabwriter:\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// FuzzTableLayout holds the table's own layout to text/tabwriter's.
func FuzzTableLayout(f *testing.F) {
	for _, s := range []string{"a,b,c,d", "NAME,SKILL,,x\ty,é,\xff", "\x1b,\v\f,日本語,a"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		tb := tableOf(s, 1+int(n%4))
		if len(tb.ends) == 0 {
			return
		}
		if got, want := tb.layout(), tb.tabwriter(); !bytes.Equal(got, want) {
			t.Fatalf("layout:\n%q\ntabwriter:\n%q", got, want)
		}
	})
}

// FuzzTableCell holds a row's cells to their definition: tabs and line
// breaks become spaces, then what a terminal would obey is escaped.
func FuzzTableCell(f *testing.F) {
	for _, s := range []string{"plain text", "a\tb\r\nc", "\x1b[2J", "\x7f", "é", "\xff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tb := newTable(io.Discard)
		tb.row(s)
		if want := workspace.EscapeTerminal(cellReplacer.Replace(s)); tb.cells[0] != want {
			t.Fatalf("cell of %q = %q, want %q", s, tb.cells[0], want)
		}
	})
}

// BenchmarkToolsTable1000 lays out `agent tools`'s table of 1,000 tools,
// with each description cut to its first line as toolsRun does.
func BenchmarkToolsTable1000(b *testing.B) {
	desc := "Converts CSV and Excel files into charts and summary tables. Use when the user shares tabular data."
	for b.Loop() {
		tb := newTable(io.Discard, "NAME", "SKILL", "DESCRIPTION")
		for i := range 1000 {
			tb.row("convert_table", fmt.Sprintf("skill-%04d", i), workspace.FirstLine(desc, 100))
		}
		_ = tb.flush()
	}
}
