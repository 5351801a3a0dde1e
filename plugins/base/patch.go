package base

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// The apply_patch format, as other coding agents write it:
//
//	*** Begin Patch
//	*** Add File: path
//	+line
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path
//	@@ optional line to find first, such as a func signature
//	 context line
//	-removed line
//	+added line
//	*** End of File
//	*** End Patch
const (
	beginPatch = "*** Begin Patch"
	endPatch   = "*** End Patch"
	addFile    = "*** Add File: "
	deleteFile = "*** Delete File: "
	updateFile = "*** Update File: "
	moveTo     = "*** Move to: "
	endOfFile  = "*** End of File"
)

// OpKind is what a patch does to one file.
type OpKind string

// The kinds of PatchOp.
const (
	OpAdd    OpKind = "add"
	OpDelete OpKind = "delete"
	OpUpdate OpKind = "update"
)

// PatchOp is one file section of a patch.
type PatchOp struct {
	Kind    OpKind
	Path    string
	MoveTo  string  // update only; "" keeps the path
	Content string  // add only: the new file
	Chunks  []Chunk // update only
	Line    int     // 1-based line of the section header, for messages
}

// Chunk is one @@ hunk of an update: Old (context and removed lines) is
// replaced by New (context and added lines).
type Chunk struct {
	Anchor string // text after "@@", a line to find before Old; "" for none
	Old    []string
	New    []string
	EOF    bool // Old must end at the end of the file
	Line   int
	// Ops is the hunk in order, one of ' ', '-', '+' per line, so that a
	// context line keeps the file's own text (trailing spaces, quotes)
	// rather than the patch's.
	Ops []byte
}

// ParsePatch parses a patch in the *** Begin Patch format. A heredoc
// wrapper (`<<'EOF'` ... `EOF`) around it, as shells feed it, is ignored.
func ParsePatch(text string) ([]PatchOp, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	first := 0
	for first < len(lines) && strings.TrimSpace(lines[first]) == "" {
		first++
	}
	if first < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[first]), "<<") && len(lines) > first+1 {
		lines, first = lines[:len(lines)-1], first+1 // heredoc
	}
	if first >= len(lines) || strings.TrimSpace(lines[first]) != beginPatch {
		return nil, patchErr(first+1, "the patch must start with %q", beginPatch)
	}
	last := len(lines) - 1
	if last <= first || strings.TrimSpace(lines[last]) != endPatch {
		return nil, patchErr(last+1, "the patch must end with %q", endPatch)
	}
	var ops []PatchOp
	i := first + 1
	for i < last {
		line := lines[i]
		header := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(header, addFile):
			op := PatchOp{Kind: OpAdd, Path: strings.TrimSpace(header[len(addFile):]), Line: i + 1}
			var b strings.Builder
			for i++; i < last && !strings.HasPrefix(lines[i], "*** "); i++ {
				body, ok := strings.CutPrefix(lines[i], "+")
				if !ok {
					return nil, patchErr(i+1, "every line of an added file starts with '+'; got %q", clip(lines[i]))
				}
				b.WriteString(body)
				b.WriteByte('\n')
			}
			op.Content = b.String()
			ops = append(ops, op)
		case strings.HasPrefix(header, deleteFile):
			ops = append(ops, PatchOp{Kind: OpDelete, Path: strings.TrimSpace(header[len(deleteFile):]), Line: i + 1})
			i++
		case strings.HasPrefix(header, updateFile):
			op := PatchOp{Kind: OpUpdate, Path: strings.TrimSpace(header[len(updateFile):]), Line: i + 1}
			i++
			if i < last && strings.HasPrefix(strings.TrimSpace(lines[i]), moveTo) {
				op.MoveTo = strings.TrimSpace(strings.TrimSpace(lines[i])[len(moveTo):])
				if op.MoveTo == "" {
					return nil, patchErr(i+1, "%q needs a path", strings.TrimSpace(moveTo))
				}
				i++
			}
			var err error
			if op.Chunks, i, err = parseChunks(lines, i, last); err != nil {
				return nil, err
			}
			if len(op.Chunks) == 0 && op.MoveTo == "" {
				return nil, patchErr(op.Line, "update of %s has no @@ hunk; add one, or use *** Move to:", op.Path)
			}
			ops = append(ops, op)
		case header == "":
			i++
		default:
			return nil, patchErr(i+1, "expected *** Add File:, *** Delete File: or *** Update File:, got %q", clip(line))
		}
		if n := len(ops); n > 0 && ops[n-1].Path == "" {
			return nil, patchErr(ops[n-1].Line, "a file section needs a path")
		}
	}
	if len(ops) == 0 {
		return nil, patchErr(first+1, "the patch changes no file")
	}
	return ops, nil
}

func parseChunks(lines []string, i, last int) ([]Chunk, int, error) {
	var chunks []Chunk
	var cur *Chunk
	for ; i < last; i++ {
		line := lines[i]
		if line == endOfFile || strings.TrimSpace(line) == endOfFile {
			if cur == nil {
				return nil, i, patchErr(i+1, "%q must follow a hunk", endOfFile)
			}
			cur.EOF = true
			continue
		}
		if strings.HasPrefix(line, "*** ") {
			break
		}
		if anchor, ok := strings.CutPrefix(line, "@@"); ok {
			anchor = strings.TrimSpace(anchor)
			if strings.HasSuffix(anchor, "@@") { // unified-diff style "@@ -1,2 +1,3 @@ ctx"
				anchor = ""
			} else if j := strings.LastIndex(anchor, "@@ "); strings.HasPrefix(anchor, "-") && j >= 0 {
				anchor = strings.TrimSpace(anchor[j+3:])
			}
			chunks = append(chunks, Chunk{Anchor: anchor, Line: i + 1})
			cur = &chunks[len(chunks)-1]
			continue
		}
		if cur == nil { // the first hunk may omit its @@ line
			chunks = append(chunks, Chunk{Line: i + 1})
			cur = &chunks[len(chunks)-1]
		}
		switch {
		case line == "":
			cur.Old, cur.New = append(cur.Old, ""), append(cur.New, "")
			cur.Ops = append(cur.Ops, ' ')
		case line[0] == ' ':
			cur.Old, cur.New = append(cur.Old, line[1:]), append(cur.New, line[1:])
			cur.Ops = append(cur.Ops, ' ')
		case line[0] == '-':
			cur.Old = append(cur.Old, line[1:])
			cur.Ops = append(cur.Ops, '-')
		case line[0] == '+':
			cur.New = append(cur.New, line[1:])
			cur.Ops = append(cur.Ops, '+')
		default:
			return nil, i, patchErr(i+1, "a hunk line starts with ' ', '-' or '+'; got %q", clip(line))
		}
	}
	for _, c := range chunks {
		if len(c.Old) == 0 && len(c.New) == 0 {
			return nil, i, patchErr(c.Line, "empty hunk; give context lines and the change")
		}
	}
	return chunks, i, nil
}

func patchErr(line int, format string, a ...any) error {
	return errorf(CodeInvalidArgs, "patch line %d: %s; nothing was changed", line, fmt.Sprintf(format, a...))
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// applyChunks applies an update's hunks to text, or says which hunk did
// not apply. The result ends with a newline.
func applyChunks(text string, chunks []Chunk, path string) (string, error) {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type repl struct {
		at, n int
		with  []string
	}
	var repls []repl
	cursor := 0
	for k, c := range chunks {
		if c.Anchor != "" {
			at := seek(lines, []string{c.Anchor}, cursor, false)
			if at < 0 {
				return "", errorf(CodeNoMatch, "%s: hunk %d (patch line %d): the @@ line %q is not in the file; read the file again and write the hunk against its current text. Nothing was changed", path, k+1, c.Line, clip(c.Anchor))
			}
			cursor = at + 1
		}
		old, with := c.Old, c.New
		if len(old) == 0 {
			repls = append(repls, repl{at: len(lines), with: with})
			continue
		}
		at := seek(lines, old, cursor, c.EOF)
		if at < 0 && old[len(old)-1] == "" { // a trailing blank line in the hunk that the file lacks
			old = old[:len(old)-1]
			if len(with) > 0 && with[len(with)-1] == "" {
				with = with[:len(with)-1]
			}
			at = seek(lines, old, cursor, c.EOF)
		}
		if at < 0 {
			return "", errorf(CodeNoMatch, "%s: hunk %d (patch line %d) does not apply: these lines are not in the file after line %d:\n%s\nread the file again and write the hunk against its current text. Nothing was changed", path, k+1, c.Line, cursor, clip(strings.Join(old[:min(len(old), 4)], "\n")))
		}
		repls = append(repls, repl{at: at, n: len(old), with: keepContext(c, lines[at:at+len(old)], with)})
		cursor = at + len(old)
	}
	// A pure addition goes at the end, so hunks are not always in file
	// order: sort them, and refuse hunks that change the same lines.
	sort.SliceStable(repls, func(i, j int) bool { return repls[i].at < repls[j].at })
	for k := 1; k < len(repls); k++ {
		if repls[k].at < repls[k-1].at+repls[k-1].n {
			return "", errorf(CodeNoMatch, "%s: two hunks change the same lines; merge them into one. Nothing was changed", path)
		}
	}
	for k := len(repls) - 1; k >= 0; k-- {
		r := repls[k]
		lines = append(lines[:r.at], append(append([]string{}, r.with...), lines[r.at+r.n:]...)...)
	}
	if len(lines) == 0 {
		return "", nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// keepContext is with, the hunk's new lines, with each context line taken
// from matched, the file's lines that the hunk's old lines matched.
func keepContext(c Chunk, matched, with []string) []string {
	out := make([]string, 0, len(with))
	oi, ni := 0, 0
	for _, op := range c.Ops {
		if ni >= len(with) && op != '-' {
			break
		}
		switch op {
		case ' ':
			if oi < len(matched) {
				out = append(out, matched[oi])
			} else {
				out = append(out, with[ni])
			}
			oi++
			ni++
		case '-':
			oi++
		case '+':
			out = append(out, with[ni])
			ni++
		}
	}
	return append(out, with[min(ni, len(with)):]...)
}

// seek finds pat in lines at or after start: exactly, then ignoring
// trailing space, then ignoring surrounding space, then also treating
// typographic dashes and quotes as ASCII (models write them). With eof it
// tries the end of the file first.
func seek(lines, pat []string, start int, eof bool) int {
	if len(pat) > len(lines) {
		return -1
	}
	for _, norm := range []func(string) string{
		func(s string) string { return s },
		func(s string) string { return strings.TrimRight(s, " \t") },
		strings.TrimSpace,
		func(s string) string { return asciiPunct(strings.TrimSpace(s)) },
	} {
		eq := func(at int) bool {
			for j, p := range pat {
				if norm(lines[at+j]) != norm(p) {
					return false
				}
			}
			return true
		}
		if eof {
			if at := len(lines) - len(pat); at >= start && eq(at) {
				return at
			}
		}
		for at := start; at+len(pat) <= len(lines); at++ {
			if eq(at) {
				return at
			}
		}
	}
	return -1
}

var punct = strings.NewReplacer(
	"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2212", "-",
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
	"\u201C", "\"", "\u201D", "\"", "\u201E", "\"", "\u00A0", " ",
)

func asciiPunct(s string) string { return punct.Replace(s) }

// PatchInput is apply_patch's input.
type PatchInput struct {
	Patch string `json:"patch" description:"The patch, from *** Begin Patch to *** End Patch"`
}

// Move is one renamed file.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// PatchResult says what apply_patch changed.
type PatchResult struct {
	Added   []string `json:"added,omitempty"`
	Updated []string `json:"updated,omitempty"`
	Deleted []string `json:"deleted,omitempty"`
	Moved   []Move   `json:"moved,omitempty"`
}

// fileState is a file as the patch leaves it, and as it was, for rollback.
type fileState struct {
	shown          string
	exists, was    bool
	data, orig     []byte
	mode, origMode fs.FileMode
	crlf           bool
}

func (s *service) applyPatch(_ context.Context, in PatchInput) (PatchResult, string, error) {
	ops, err := ParsePatch(in.Patch)
	if err != nil {
		return PatchResult{}, "", err
	}
	w, err := s.fs()
	if err != nil {
		return PatchResult{}, "", err
	}
	defer w.Close()
	states := map[string]*fileState{}
	var order []string
	// state returns the file as the patch has it so far, reading it from
	// disk the first time.
	state := func(p string) (*fileState, error) {
		r, err := w.rel(p)
		if err != nil {
			return nil, err
		}
		if r == "." {
			return nil, errorf(CodeInvalidArgs, "%s is the workspace folder; a patch changes files", p)
		}
		r = filepath.Clean(r)
		if st, ok := states[r]; ok {
			return st, nil
		}
		st := &fileState{shown: p, mode: 0o644}
		data, fi, err := w.readAll(p, maxEditBytes)
		switch {
		case err == nil:
			st.exists, st.was, st.data, st.orig = true, true, data, data
			st.mode, st.origMode = fi.Mode().Perm(), fi.Mode().Perm()
			st.crlf = bytes.Contains(data, []byte("\r\n"))
		case codeOf(err) != CodeNotFound:
			return nil, err
		}
		states[r] = st
		order = append(order, r)
		return st, nil
	}
	var res PatchResult
	for _, op := range ops {
		st, err := state(op.Path)
		if err != nil {
			return PatchResult{}, "", err
		}
		switch op.Kind {
		case OpAdd:
			st.exists, st.data = true, []byte(op.Content)
			res.Added = append(res.Added, op.Path)
		case OpDelete:
			if !st.exists {
				return PatchResult{}, "", errorf(CodeNotFound, "%s (patch line %d) cannot be deleted: it does not exist; use list_dir to check the path. Nothing was changed", op.Path, op.Line)
			}
			st.exists, st.data = false, nil
			res.Deleted = append(res.Deleted, op.Path)
		case OpUpdate:
			if !st.exists {
				return PatchResult{}, "", errorf(CodeNotFound, "%s (patch line %d) cannot be updated: it does not exist; use *** Add File: to create it. Nothing was changed", op.Path, op.Line)
			}
			if !isText(st.data[:min(len(st.data), sniffLen)]) {
				return PatchResult{}, "", notText(op.Path, st.data)
			}
			text := lf(string(st.data))
			if len(op.Chunks) > 0 {
				if text, err = applyChunks(text, op.Chunks, op.Path); err != nil {
					return PatchResult{}, "", err
				}
			}
			data := []byte(text)
			if st.crlf {
				data = []byte(strings.ReplaceAll(text, "\n", "\r\n"))
			}
			if op.MoveTo == "" {
				st.data = data
				res.Updated = append(res.Updated, op.Path)
				break
			}
			dst, err := state(op.MoveTo)
			if err != nil {
				return PatchResult{}, "", err
			}
			if dst != st {
				st.exists, st.data = false, nil
			}
			dst.exists, dst.data, dst.mode = true, data, st.origMode|st.mode
			res.Moved = append(res.Moved, Move{From: op.Path, To: op.MoveTo})
		}
	}
	// Every hunk applied: write the files, undoing what was written when a
	// later write fails.
	for i, r := range order {
		if err := w.commit(states[r]); err != nil {
			for _, done := range order[:i] {
				_ = w.rollback(states[done])
			}
			return PatchResult{}, "", err
		}
	}
	return res, summary(res), nil
}

func (w *fsys) commit(st *fileState) error {
	switch {
	case st.exists:
		if st.was && bytes.Equal(st.data, st.orig) {
			return nil
		}
		_, err := w.writeFileMode(st.shown, st.data, st.mode)
		return err
	case st.was:
		return w.remove(st.shown)
	}
	return nil
}

func (w *fsys) rollback(st *fileState) error {
	if st.was {
		_, err := w.writeFileMode(st.shown, st.orig, st.origMode)
		return err
	}
	if st.exists {
		return w.remove(st.shown)
	}
	return nil
}

func summary(r PatchResult) string {
	var b []string
	for _, p := range r.Added {
		b = append(b, "A "+p)
	}
	for _, p := range r.Updated {
		b = append(b, "M "+p)
	}
	for _, m := range r.Moved {
		b = append(b, "R "+m.From+" -> "+m.To)
	}
	for _, p := range r.Deleted {
		b = append(b, "D "+p)
	}
	return strings.Join(b, "; ")
}
