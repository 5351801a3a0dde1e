package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"

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

// table writes aligned columns, GitHub CLI style. Its output is buffered:
// tabwriter writes each cell on its own, which for 1,000 rows was a third
// of the write system calls of `agent tools` and `agent skill list`.
type table struct {
	tw  *tabwriter.Writer
	out *bufio.Writer
	buf []byte // one row
}

func newTable(w io.Writer, header ...string) *table {
	out := bufio.NewWriterSize(w, 64<<10)
	t := &table{tw: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0), out: out}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

// cellReplacer keeps tabs and newlines inside a cell from breaking the
// alignment.
var cellReplacer = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// row writes one row. Cells hold skill-supplied text (names,
// descriptions, SKILL.md fields), so what a terminal would obey in them
// is shown escaped (workspace.EscapeTerminal).
func (t *table) row(cols ...string) {
	t.buf = t.buf[:0]
	for i, c := range cols {
		if strings.ContainsAny(c, "\t\n\r") {
			c = cellReplacer.Replace(c)
		}
		c = workspace.EscapeTerminal(c)
		if i > 0 {
			t.buf = append(t.buf, '\t')
		}
		t.buf = append(t.buf, c...)
	}
	t.buf = append(t.buf, '\n')
	_, _ = t.tw.Write(t.buf)
}

func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	return t.out.Flush()
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
