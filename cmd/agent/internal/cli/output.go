package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/app/workspace"
)

// errCanceled is returned when the user answers no to a question.
var errCanceled = errors.New("canceled")

// confirm asks a yes/no question on stderr and reads the answer from stdin.
// Anything but y or yes is no, which is the safe default.
func confirm(ios *IOStreams, question string) (bool, error) {
	fmt.Fprintf(ios.ErrOut, "%s [y/N] ", question)
	line, err := ios.ReadLine()
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// shortSHA is the 7-character form of a commit SHA that people compare by eye.
func shortSHA(sha string) string {
	// An OCI source's commit is its manifest digest.
	if d, ok := strings.CutPrefix(sha, "sha256:"); ok && len(d) > 12 {
		return "sha256:" + d[:12]
	}
	if len(sha) > 7 {
		return sha[:7]
	}
	if sha == "" {
		return "-"
	}
	return sha
}

// table writes aligned columns, GitHub CLI style: text/tabwriter's layout
// (padding 2, spaces). It keeps the escaped cells and lays them out at
// flush in one buffer and one write: through tabwriter, which copies
// every cell and keeps a record of each, the table was a sixth of `agent
// tools` at 1,000 skills (docs/design.md). Rows of differing lengths,
// which tabwriter lays out in blocks, still go through it.
type table struct {
	w     io.Writer
	cells []string // escaped, row after row
	ends  []int    // where each row's cells end in cells
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{w: w}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

// cellReplacer keeps tabs and newlines inside a cell from breaking the
// alignment.
var cellReplacer = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// row adds one row. Cells hold skill-supplied text (names, descriptions,
// SKILL.md fields), so what a terminal would obey in them is shown escaped
// (workspace.EscapeTerminal).
func (t *table) row(cols ...string) {
	for _, c := range cols {
		if workspace.PrintableASCII(c) { // one pass for what almost every cell is
			t.cells = append(t.cells, c)
			continue
		}
		if strings.ContainsAny(c, "\t\n\r") {
			c = cellReplacer.Replace(c)
		}
		t.cells = append(t.cells, workspace.EscapeTerminal(c))
	}
	t.ends = append(t.ends, len(t.cells))
}

func (t *table) flush() error {
	if len(t.ends) == 0 {
		return nil
	}
	_, err := t.w.Write(t.layout())
	return err
}

// layout is the table as tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) lays it
// out: every cell but a row's last padded to its column's widest (in
// runes) plus two spaces.
func (t *table) layout() []byte {
	ncol := t.ends[0]
	for i, end := range t.ends {
		if end != (i+1)*ncol {
			return t.tabwriter()
		}
	}
	widths := make([]int, ncol)
	size := 0
	for i, c := range t.cells {
		col := i % ncol
		size += len(c) + 1
		if col < ncol-1 {
			widths[col] = max(widths[col], utf8.RuneCountInString(c))
		}
	}
	for _, w := range widths[:ncol-1] {
		size += (w + 2) * len(t.ends)
	}
	out := make([]byte, 0, size)
	for i, c := range t.cells {
		out = append(out, c...)
		if col := i % ncol; col < ncol-1 {
			for n := widths[col] + 2 - utf8.RuneCountInString(c); n > 0; n-- {
				out = append(out, ' ')
			}
		} else {
			out = append(out, '\n')
		}
	}
	return out
}

// tabwriter lays the table out through text/tabwriter.
func (t *table) tabwriter() []byte {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	start := 0
	for _, end := range t.ends {
		_, _ = io.WriteString(tw, strings.Join(t.cells[start:end], "\t")+"\n")
		start = end
	}
	_ = tw.Flush() // writes to memory
	return b.Bytes()
}

// writeJSON writes v indented, with a trailing newline, so output is stable
// and diffable.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// yesNo renders a boolean for tables.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// dedent removes the common leading tabs of a raw string literal's lines and
// the first and last line breaks, so help text can be indented with the code.
func dedent(s string) string {
	// One pass to find the indent, one to copy: every command's help text
	// goes through here when the command tree is built, which every agent
	// process does (`agent version` included).
	s = strings.TrimPrefix(s, "\n")
	indent := -1
	for rest := s; rest != ""; {
		line, next, _ := strings.Cut(rest, "\n")
		rest = next
		if strings.TrimSpace(line) == "" {
			continue
		}
		if n := len(line) - len(strings.TrimLeft(line, "\t")); indent < 0 || n < indent {
			indent = n
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	for rest, first := s, true; ; first = false {
		line, next, more := strings.Cut(rest, "\n")
		if !first {
			b.WriteByte('\n')
		}
		if len(line) >= indent && indent > 0 {
			b.WriteString(line[indent:])
		} else {
			b.WriteString(strings.TrimLeft(line, "\t"))
		}
		if !more {
			break
		}
		rest = next
	}
	return strings.TrimRight(b.String(), "\n\t ")
}

// shortLived lets a command that ends in milliseconds (listings, add,
// remove) skip most garbage collection: with 1,000 skills it allocates a
// few MB, and at the default GOGC a collection or two cost it a third of
// its CPU time (SPEC §11 holds listings to 2.5× `agent version`, and add +
// remove at 1,000 skills to 1.5× an empty home). The heap stays bounded:
// the collector still runs past 5× the live heap.
func shortLived() { debug.SetGCPercent(400) }
