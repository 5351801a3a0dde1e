package base

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// ReadInput is read_file's input.
type ReadInput struct {
	Path   string `json:"path" description:"File path, relative to the workspace (or absolute inside it)"`
	Offset int    `json:"offset,omitempty" description:"First line to read, 1-based (default 1)"`
	Limit  int    `json:"limit,omitempty" description:"Most lines to return (default 2000)"`
}

// ReadResult is read_file's result.
type ReadResult struct {
	Path       string `json:"path"`
	Content    string `json:"content"` // lines as "L<n>: text"
	TotalLines int    `json:"total_lines"`
	NextOffset int    `json:"next_offset,omitempty"` // where to continue; 0 at the end
}

// sniffLen is how much of a file decides whether it is text.
const sniffLen = 8 << 10

// isText reports whether the start of a file looks like text: no NUL
// byte and valid UTF-8 (a rune cut at the end of the sample allowed).
func isText(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return false
	}
	if utf8.Valid(b) {
		return true
	}
	// A sample may end in the middle of a rune.
	j := len(b) - 1
	for j > 0 && len(b)-j < utf8.UTFMax && !utf8.RuneStart(b[j]) {
		j--
	}
	return len(b) >= sniffLen && !utf8.FullRune(b[j:]) && utf8.Valid(b[:j])
}

func notText(p string, sample []byte) error {
	kind := http.DetectContentType(sample)
	hint := "use exec with a tool that understands it (file, xxd, ...)"
	switch {
	case strings.HasPrefix(kind, "image/"):
		hint = "use read_image_file"
	case kind == "application/pdf":
		hint = "use read_pdf_file"
	}
	return errorf(CodeNotText, "%s is not a UTF-8 text file (it looks like %s); %s", p, kind, hint)
}

func (s *service) readFile(_ context.Context, in ReadInput) (ReadResult, string, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return ReadResult{}, "", errorf(CodeInvalidArgs, "offset and limit must be positive (offset is 1-based)")
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = DefaultReadLimit
	}
	w, err := s.fs()
	if err != nil {
		return ReadResult{}, "", err
	}
	defer w.Close()
	f, _, err := w.openFile(in.Path)
	if err != nil {
		return ReadResult{}, "", err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if sample, _ := br.Peek(sniffLen); !isText(sample) {
		return ReadResult{}, "", notText(in.Path, sample)
	}
	var b strings.Builder
	n, next, cut := 0, 0, 0
	for {
		line, err := br.ReadSlice('\n')
		long := errors.Is(err, bufio.ErrBufferFull)
		if len(line) > 0 || long {
			n++
			full := line
			if long {
				full = append([]byte(nil), line...)
			}
			for long { // a line longer than the buffer: keep its start only
				var more []byte
				more, err = br.ReadSlice('\n')
				long = errors.Is(err, bufio.ErrBufferFull)
				if len(full) < maxLineBytes {
					full = append(full, more...)
				}
			}
			if n >= offset && n < offset+limit && next == 0 {
				if b.Len() > maxReadBytes {
					next = n
				} else {
					text := strings.TrimRight(string(full), "\r\n")
					if len(text) > maxLineBytes {
						text = strings.ToValidUTF8(text[:maxLineBytes], "") + " [... line cut at 2000 bytes]"
						cut++
					}
					fmt.Fprintf(&b, "L%d: %s\n", n, text)
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return ReadResult{}, "", w.fail(in.Path, err)
		}
	}
	if n > 0 && offset > n {
		return ReadResult{}, "", errorf(CodeInvalidArgs, "offset %d is past the end of %s, which has %d lines; use an offset from 1 to %d", offset, in.Path, n, n)
	}
	last := min(n, offset+limit-1)
	if next == 0 && last < n {
		next = last + 1
	}
	if next > 0 {
		last = next - 1
	}
	res := ReadResult{Path: in.Path, Content: b.String(), TotalLines: n, NextOffset: next}
	msg := fmt.Sprintf("lines %d-%d of %d", offset, last, n)
	if n == 0 {
		msg = "the file is empty"
	}
	if next > 0 {
		msg += fmt.Sprintf("; call again with offset %d for more", next)
	}
	if cut > 0 {
		msg += fmt.Sprintf("; %d long lines were cut", cut)
	}
	return res, msg, nil
}

// WriteInput is write_file's input.
type WriteInput struct {
	Path    string `json:"path" description:"File path, relative to the workspace; missing parent folders are created"`
	Content string `json:"content" description:"The whole new content of the file"`
}

// WriteResult is write_file's result.
type WriteResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

func (s *service) writeFile(_ context.Context, in WriteInput) (WriteResult, string, error) {
	if in.Path == "" {
		return WriteResult{}, "", errorf(CodeInvalidArgs, "path is empty; pass a file path relative to the workspace")
	}
	w, err := s.fs()
	if err != nil {
		return WriteResult{}, "", err
	}
	defer w.Close()
	created, err := w.writeFile(in.Path, []byte(in.Content))
	if err != nil {
		return WriteResult{}, "", err
	}
	verb := "replaced"
	if created {
		verb = "created"
	}
	return WriteResult{Path: in.Path, Bytes: len(in.Content), Created: created},
		fmt.Sprintf("%s %s (%d bytes)", verb, in.Path, len(in.Content)), nil
}

// EditInput is edit_file's input.
type EditInput struct {
	Path       string `json:"path" description:"File path, relative to the workspace"`
	OldText    string `json:"old_text" description:"Exact text to replace (line endings may be LF or CRLF); include enough lines to make it unique"`
	NewText    string `json:"new_text" description:"Text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" description:"Replace every occurrence instead of requiring exactly one"`
}

// EditResult is edit_file's result.
type EditResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
}

func (s *service) editFile(_ context.Context, in EditInput) (EditResult, string, error) {
	if in.OldText == "" {
		return EditResult{}, "", errorf(CodeInvalidArgs, "old_text is empty; give the exact text to replace (use write_file to create a file)")
	}
	w, err := s.fs()
	if err != nil {
		return EditResult{}, "", err
	}
	defer w.Close()
	data, _, err := w.readAll(in.Path, maxEditBytes)
	if err != nil {
		return EditResult{}, "", err
	}
	if !isText(data[:min(len(data), sniffLen)]) {
		return EditResult{}, "", notText(in.Path, data)
	}
	text := lf(string(data))
	old := lf(in.OldText)
	count := strings.Count(text, old)
	switch {
	case count == 0:
		return EditResult{}, "", errorf(CodeNoMatch, "old_text was not found in %s%s; read the file again with read_file and copy the text exactly, whitespace included", in.Path, nearLine(text, old))
	case count > 1 && !in.ReplaceAll:
		return EditResult{}, "", errorf(CodeAmbiguous, "old_text occurs %d times in %s (at lines %s); add surrounding lines to make it unique, or set replace_all", count, in.Path, matchLines(text, old, 10))
	}
	n := 1
	if in.ReplaceAll {
		n = count
	}
	if _, err := w.writeFile(in.Path, []byte(replaceLines(string(data), old, lf(in.NewText), n))); err != nil {
		return EditResult{}, "", err
	}
	return EditResult{Path: in.Path, Replacements: count}, fmt.Sprintf("%d replacement(s) in %s", count, in.Path), nil
}

func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// replaceLines replaces the first n matches of old in lf(data) with repl
// (both LF) and splices them into data itself, so that every line outside
// a match keeps its ending even in a file that mixes LF and CRLF. repl's
// lines end like the matched text's, or like the line the match is on.
func replaceLines(data, old, repl string, n int) string {
	var b strings.Builder
	text := lf(data)
	r, l := 0, 0 // a position in data and the same one in text
	advance := func(to int) {
		for ; l < to; l++ {
			if strings.HasPrefix(data[r:], "\r\n") {
				r++
			}
			r++
		}
	}
	done := 0
	for ; n < 0 || done < n; done++ {
		i := strings.Index(text[l:], old)
		if i < 0 {
			break
		}
		from := r
		advance(l + i)
		b.WriteString(data[from:r])
		start := r
		advance(l + len(old))
		if crlfAt(data, start, r) {
			b.WriteString(strings.ReplaceAll(repl, "\n", "\r\n"))
		} else {
			b.WriteString(repl)
		}
	}
	b.WriteString(data[r:])
	return b.String()
}

// crlfAt reports whether text replacing data[start:end] should end its
// lines with CRLF: as the match does, else as the line it is on, else as
// the line before it.
func crlfAt(data string, start, end int) bool {
	if i := strings.IndexByte(data[start:end], '\n'); i >= 0 {
		return i > 0 && data[start+i-1] == '\r'
	}
	if i := strings.IndexByte(data[end:], '\n'); i >= 0 {
		return end+i > 0 && data[end+i-1] == '\r'
	}
	if i := strings.LastIndexByte(data[:start], '\n'); i >= 0 {
		return i > 0 && data[i-1] == '\r'
	}
	return false
}

// matchLines lists the 1-based lines where old starts, at most n of them.
func matchLines(text, old string, n int) string {
	var out []string
	for i, off := 0, 0; ; {
		j := strings.Index(text[off:], old)
		if j < 0 || len(out) == n {
			break
		}
		i += strings.Count(text[off:off+j], "\n")
		out = append(out, fmt.Sprint(i+1))
		off += j + max(len(old), 1)
		i += strings.Count(old, "\n")
	}
	return strings.Join(out, ", ")
}

// nearLine points at a line that holds old's first line when only
// whitespace differs, the usual cause of a failed edit.
func nearLine(text, old string) string {
	first := strings.TrimSpace(strings.SplitN(old, "\n", 2)[0])
	if first == "" {
		return ""
	}
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == first {
			return fmt.Sprintf(" (line %d has its first line with different indentation or the lines after it differ)", i+1)
		}
	}
	return ""
}

// ListInput is list_dir's input.
type ListInput struct {
	DirPath string `json:"dir_path,omitempty" description:"Folder to list, relative to the workspace (default the workspace)"`
	Depth   int    `json:"depth,omitempty" description:"How many levels to descend (default 2)"`
	Offset  int    `json:"offset,omitempty" description:"First entry to return, 1-based (default 1)"`
	Limit   int    `json:"limit,omitempty" description:"Most entries to return (default 100)"`
}

// ListResult is list_dir's result.
type ListResult struct {
	DirPath    string `json:"dir_path"`
	Entries    string `json:"entries"` // one per line, indented by depth; "/" marks folders, "@" links
	Total      int    `json:"total"`
	NextOffset int    `json:"next_offset,omitempty"`
}

const maxListEntries = 20000

func (s *service) listDir(_ context.Context, in ListInput) (ListResult, string, error) {
	if in.Depth < 0 || in.Offset < 0 || in.Limit < 0 {
		return ListResult{}, "", errorf(CodeInvalidArgs, "depth, offset and limit must be positive")
	}
	depth, offset, limit := in.Depth, max(in.Offset, 1), in.Limit
	if depth == 0 {
		depth = 2
	}
	if limit == 0 {
		limit = 100
	}
	dir := in.DirPath
	if dir == "" {
		dir = "."
	}
	w, err := s.fs()
	if err != nil {
		return ListResult{}, "", err
	}
	defer w.Close()
	f, rel, err := w.open(dir)
	if err != nil {
		return ListResult{}, "", err
	}
	f.Close()
	var lines []string
	var walk func(rel string, level int) error
	walk = func(rel string, level int) error {
		d, _, err := w.open(rel)
		if err != nil {
			return err
		}
		ents, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			if level == 0 {
				return errorf(CodeNotFound, "%s is not a folder; use read_file for files", dir)
			}
			return nil
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, e := range ents {
			child := filepath.Join(rel, e.Name())
			if w.hidden(child) {
				continue
			}
			if len(lines) >= maxListEntries {
				return nil
			}
			mark := ""
			switch t := e.Type(); {
			case t.IsDir():
				mark = "/"
			case t&fs.ModeSymlink != 0:
				mark = "@"
			}
			lines = append(lines, strings.Repeat("  ", level)+e.Name()+mark)
			if e.IsDir() && level+1 < depth {
				if err := walk(child, level+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(rel, 0); err != nil {
		return ListResult{}, "", err
	}
	total := len(lines)
	if offset > total && total > 0 {
		return ListResult{}, "", errorf(CodeInvalidArgs, "offset %d is past the %d entries; use an offset from 1 to %d", offset, total, total)
	}
	end := min(total, offset-1+limit)
	page := lines[min(offset-1, total):end]
	res := ListResult{DirPath: dir, Entries: strings.Join(page, "\n"), Total: total}
	msg := fmt.Sprintf("entries %d-%d of %d", min(offset, total), end, total)
	if end < total {
		res.NextOffset = end + 1
		msg += fmt.Sprintf("; call again with offset %d for more", end+1)
	}
	if total == maxListEntries {
		msg += fmt.Sprintf("; stopped at %d entries, list a narrower folder or lower depth", maxListEntries)
	}
	return res, msg, nil
}

// hidden reports whether listings leave rel out: the state folder and
// AGENT_HOME.
func (w *fsys) hidden(rel string) bool {
	return rel == stateDir || w.inHomeRel(rel)
}

// FileInput is the input of read_image_file and read_pdf_file.
type FileInput struct {
	Path string `json:"path" description:"File path, relative to the workspace"`
}

// readBytes is read_image_file and read_pdf_file: the file's bytes as
// {"mime_type", "data" (base64)}, the shape MCP front ends turn into image
// or resource content. Path and size go in the message.
func (s *service) readBytes(in FileInput, limit int64, want, tool string) (map[string]string, string, error) {
	w, err := s.fs()
	if err != nil {
		return nil, "", err
	}
	defer w.Close()
	f, fi, err := w.openFile(in.Path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, "", errorf(CodeTooLarge, "%s is %d bytes; %s takes at most %d MB; shrink or convert it first (for example with exec)", in.Path, fi.Size(), tool, limit>>20)
	}
	data := make([]byte, fi.Size())
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, "", w.fail(in.Path, err)
	}
	data = data[:n]
	mime := http.DetectContentType(data)
	if mime, _, _ = strings.Cut(mime, ";"); !strings.HasPrefix(mime, want) {
		hint := "use read_file for text"
		if strings.HasPrefix(mime, "image/") {
			hint = "use read_image_file"
		} else if mime == "application/pdf" {
			hint = "use read_pdf_file"
		}
		return nil, "", errorf(CodeInvalidArgs, "%s is %s, not what %s reads; %s", in.Path, mime, tool, hint)
	}
	return map[string]string{"mime_type": mime, "data": base64.StdEncoding.EncodeToString(data)},
		fmt.Sprintf("%s: %s, %d bytes", in.Path, mime, len(data)), nil
}
