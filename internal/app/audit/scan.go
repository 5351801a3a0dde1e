package audit

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentskills/agent/registry/manifest"
)

// Finding is one thing a rule found.
type Finding struct {
	Rule     string   `json:"rule"`
	Category string   `json:"category"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"` // slash path inside the skill
	Line     int      `json:"line"` // 1-based
	Column   int      `json:"column"`
	Message  string   `json:"message"`
	// Excerpt is the line, cut to 160 characters, with invisible and
	// control characters written as \u{...} so that printing it shows
	// what is hidden.
	Excerpt string `json:"excerpt"`
	Fix     string `json:"fix"`
}

// Report is the audit of one skill.
type Report struct {
	Skill    string    `json:"skill"`
	Source   string    `json:"source,omitempty"`
	Pack     Pack      `json:"rules"`
	Files    int       `json:"files"`
	Skipped  []string  `json:"skipped,omitempty"` // binary or oversized files, not read
	Findings []Finding `json:"findings"`
	At       time.Time `json:"audited_at"`
}

// Max is the highest severity found, or SeverityNone.
func (r *Report) Max() Severity {
	m := SeverityNone
	for _, f := range r.Findings {
		m = max(m, f.Severity)
	}
	return m
}

// Count returns how many findings are at or above s.
func (r *Report) Count(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity >= s {
			n++
		}
	}
	return n
}

// Summary is one line: the counts per severity, highest first.
func (r *Report) Summary() string {
	if len(r.Findings) == 0 {
		return "no findings"
	}
	var parts []string
	for s := SeverityCritical; s >= SeverityInfo; s-- {
		n := 0
		for _, f := range r.Findings {
			if f.Severity == s {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return strings.Join(parts, ", ")
}

// Limits of what is read: a skill is text, and an audit must stay fast
// and bounded on a hostile tree.
const (
	maxFileBytes = 1 << 20
	maxFiles     = 10000
	// maxPerRuleFile caps the findings of one rule in one file: the
	// first ones say enough.
	maxPerRuleFile = 20
)

// skipDirs are never read: not part of what is installed (__pycache__,
// SPEC §12) or not the skill's own files.
var skipDirs = map[string]bool{".git": true, "__pycache__": true}

// Audit reads every file of the skill in fsys (rooted at the skill's
// folder) and applies rs. m is its manifest (for the permission checks);
// nil reads it as declaring nothing. Symbolic links are not followed.
func (rs *Rules) Audit(fsys fs.FS, m *manifest.Manifest) (*Report, error) {
	if m == nil {
		m = &manifest.Manifest{}
	}
	rep := &Report{Skill: m.Name, Pack: rs.Pack, Findings: []Finding{}, At: time.Now().UTC()}
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && skipDirs[d.Name()] {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			rep.Skipped = append(rep.Skipped, p+" (not a regular file)")
			return nil
		}
		if rep.Files >= maxFiles {
			return fmt.Errorf("more than %d files", maxFiles)
		}
		data, truncated, err := readFile(fsys, p)
		if err != nil {
			return err
		}
		if isBinary(data) {
			rep.Skipped = append(rep.Skipped, p+" (binary)")
			return nil
		}
		if path.Base(p) == "go.sum" && !truncated && isGoSum(data) {
			rep.Skipped = append(rep.Skipped, p+" (Go module checksums only)")
			return nil
		}
		if truncated {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s (read the first %d bytes only)", p, maxFileBytes))
		}
		rep.Files++
		f := newFile(p, data)
		if rs.pf != nil {
			rs.pf.run(f)
		}
		for _, c := range rs.rules {
			rep.Findings = append(rep.Findings, c.scan(f, m)...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("audit %s: %w", m.Name, err)
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool {
		a, b := rep.Findings[i], rep.Findings[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Rule < b.Rule
	})
	return rep, nil
}

// isGoSum reports whether every line of data has go.sum's form, module,
// version and an h1: hash of 32 bytes in base64, and nothing else: then
// no rule has anything to read in it (its hashes looked like secrets and
// blobs, and were a third of the example skill's audit). One line of any
// other form and the file is read as text.
func isGoSum(data []byte) bool {
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSuffix(line, "\n")
		mod, rest, ok1 := strings.Cut(line, " ")
		ver, sum, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || mod == "" || ver == "" || !strings.HasPrefix(sum, "h1:") || len(sum) != 47 || sum[46] != '=' {
			return false
		}
		if strings.IndexFunc(line, func(r rune) bool { return r <= ' ' && r != ' ' || r > '~' }) >= 0 {
			return false
		}
		if _, err := base64.StdEncoding.DecodeString(sum[3:]); err != nil {
			return false
		}
	}
	return true
}

func readFile(fsys fs.FS, p string) ([]byte, bool, error) {
	fh, err := fsys.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", p, err)
	}
	if len(data) > maxFileBytes {
		return data[:maxFileBytes], true, nil
	}
	return data, false, nil
}

// isBinary is git's test: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// region is where a markdown line stands.
type region uint8

const (
	inProse region = iota
	inCode
	inFrontMatter
)

// file is one file being audited.
type file struct {
	name  string
	ftype string // markdown, python, shell, javascript or text
	text  string
	// starts[i] is the offset of line i+1.
	starts []int
	// regions says where each line of a markdown file stands.
	regions []region
	fold    *string
	// foldStarts are the folded text's line starts (foldedStarts).
	foldStarts []int
	// seen caches holds: rules share literals (curl, wget, base64).
	seen map[literal]bool
	// found marks the literals of pf that the file holds (prefilter.run).
	pf    *prefilter
	found []bool
}

// holds reports whether f contains l, once per literal.
func (f *file) holds(l literal) bool {
	if v, ok := f.seen[l]; ok {
		return v
	}
	var v bool
	if l.fold {
		v = strings.Contains(f.folded(), l.s)
	} else {
		v = strings.Contains(f.text, l.s)
	}
	if f.seen == nil {
		f.seen = map[literal]bool{}
	}
	f.seen[l] = v
	return v
}

func newFile(name string, data []byte) *file {
	text := string(data)
	// A leading BOM is not hidden text (SPEC §3 skips it); blank it so
	// that offsets stay.
	if strings.HasPrefix(text, "\uFEFF") {
		text = "   " + text[3:]
	}
	f := &file{name: name, text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			f.starts = append(f.starts, i+1)
		}
	}
	f.ftype = fileType(name, text)
	if f.ftype == "markdown" {
		f.markdown()
	}
	return f
}

// foldedStarts are the line starts of the folded text: folding keeps
// every newline but may change a line's length in bytes.
func (f *file) foldedStarts() []int {
	if f.foldStarts == nil {
		t := f.folded()
		f.foldStarts = []int{0}
		for i := 0; i < len(t); i++ {
			if t[i] == '\n' {
				f.foldStarts = append(f.foldStarts, i+1)
			}
		}
	}
	return f.foldStarts
}

func (f *file) folded() string {
	if f.fold == nil {
		s := foldString(f.text)
		f.fold = &s
	}
	return *f.fold
}

func (f *file) lines() int { return len(f.starts) }

// line returns line i (0-based) without its newline.
func (f *file) line(i int) string {
	end := len(f.text)
	if i+1 < len(f.starts) {
		end = f.starts[i+1] - 1
	}
	return strings.TrimSuffix(f.text[f.starts[i]:end], "\r")
}

// lineAt returns the 0-based line holding offset off.
func (f *file) lineAt(off int) int {
	return sort.Search(len(f.starts), func(i int) bool { return f.starts[i] > off }) - 1
}

func (f *file) region(i int) region {
	if f.regions == nil {
		if f.ftype == "text" {
			return inProse
		}
		return inCode
	}
	return f.regions[i]
}

// fileType is the kind of file by its extension, or its #! line.
func fileType(name, text string) string {
	ext := strings.ToLower(path.Ext(name))
	switch ext {
	case ".md", ".markdown", ".mdx":
		return "markdown"
	case ".py", ".pyw":
		return "python"
	case ".sh", ".bash", ".zsh", ".ksh", ".ps1", ".psm1", ".bat", ".cmd", ".fish":
		return "shell"
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts":
		return "javascript"
	}
	if first, _, _ := strings.Cut(text, "\n"); strings.HasPrefix(first, "#!") {
		switch {
		case strings.Contains(first, "python"):
			return "python"
		case strings.Contains(first, "node") || strings.Contains(first, "deno") || strings.Contains(first, "bun"):
			return "javascript"
		case strings.Contains(first, "sh"):
			return "shell"
		}
	}
	return "text"
}

// markdown marks each line's region: the front matter between the
// opening and closing ---, fenced code (``` or ~~~, any indent, closed by
// a fence of the same character at least as long), and prose.
func (f *file) markdown() {
	n := f.lines()
	f.regions = make([]region, n)
	i := 0
	if n > 0 && strings.TrimSpace(f.line(0)) == "---" {
		for j := 1; j < n; j++ {
			if t := strings.TrimSpace(f.line(j)); t == "---" || t == "..." {
				for k := 0; k <= j; k++ {
					f.regions[k] = inFrontMatter
				}
				i = j + 1
				break
			}
		}
	}
	var fence string // the open fence, "" outside one
	for ; i < n; i++ {
		t := strings.TrimLeft(f.line(i), " \t>")
		if fence == "" {
			if c := fenceOf(t); c != "" {
				fence = c
				f.regions[i] = inCode
				continue
			}
			f.regions[i] = inProse
			continue
		}
		f.regions[i] = inCode
		if c := fenceOf(t); c != "" && c[0] == fence[0] && len(c) >= len(fence) && strings.TrimSpace(t[len(c):]) == "" {
			fence = ""
		}
	}
}

// fenceOf returns the run of ` or ~ (3 or more) that opens t, or "".
func fenceOf(t string) string {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	j := 0
	for j < len(t) && t[j] == t[0] {
		j++
	}
	if j < 3 {
		return ""
	}
	return t[:j]
}

// scan applies one rule to one file.
func (c *compiled) scan(f *file, m *manifest.Manifest) []Finding {
	if !c.reads(f) {
		return nil
	}
	var out []Finding
	seen := map[int]bool{}
	emit := func(line, col int, detail string) bool {
		if len(out) >= maxPerRuleFile {
			return false
		}
		if seen[line] || !c.lineApplies(f, line) {
			return true
		}
		seen[line] = true
		msg := c.Description
		if detail != "" {
			msg += ": " + detail
		}
		out = append(out, Finding{Rule: c.ID, Category: c.Category, Severity: c.Severity, File: f.name,
			Line: line + 1, Column: col, Message: msg, Excerpt: Escape(f.line(line), 160), Fix: c.Remediation})
		return true
	}
	for _, p := range c.pats {
		if !p.mayMatch(f) {
			continue
		}
		lines := p.lines(f)
		if lines == nil {
			for _, loc := range p.re.FindAllStringIndex(f.text, -1) {
				line := f.lineAt(loc[0])
				col := utf8.RuneCountInString(f.text[f.starts[line]:loc[0]]) + 1
				if !emit(line, col, "") {
					break
				}
			}
			continue
		}
		// A match lies within a line: only the lines holding one of the
		// pattern's literals can hold one.
		for _, line := range lines {
			if loc := p.re.FindStringIndex(f.line(line)); loc != nil {
				col := utf8.RuneCountInString(f.line(line)[:loc[0]]) + 1
				if !emit(line, col, "") {
					break
				}
			}
		}
	}
	if c.check != nil {
		c.check(c, f, m, emit)
	}
	return out
}

// reads reports whether the rule reads f at all: code rules read code
// files, and markdown rules (with where: code for fenced blocks) the
// instructions, so that a README's install line is not taken for a
// script's.
func (c *compiled) reads(f *file) bool { return c.types == nil || c.types[f.ftype] }

// lineApplies reports whether a match on line i counts: the line's type
// and region are the rule's, and no exclude pattern matches it.
func (c *compiled) lineApplies(f *file, i int) bool {
	switch c.Where {
	case "prose":
		if f.region(i) != inProse {
			return false
		}
	case "code":
		if f.region(i) != inCode {
			return false
		}
	case "frontmatter":
		if f.region(i) != inFrontMatter {
			return false
		}
	}
	if len(c.excl) == 0 && len(c.only) == 0 {
		return true
	}
	l := f.line(i)
	for _, re := range c.excl {
		if re.MatchString(l) {
			return false
		}
	}
	if len(c.only) == 0 {
		return true
	}
	for _, re := range c.only {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}

// Escape cuts s to n runes and writes control, format (bidi, zero-width,
// tag) and other invisible characters as \u{XXXX}, so that what a
// terminal would hide or reorder is shown.
func Escape(s string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range s {
		if count >= n {
			b.WriteString("…")
			break
		}
		count++
		switch {
		case r == utf8.RuneError:
			b.WriteString(`\u{FFFD}`)
		case r == '\t':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Co, r) || (!unicode.IsGraphic(r) && r != ' '):
			fmt.Fprintf(&b, `\u{%X}`, r)
		default:
			b.WriteRune(r)
		}
	}
	return strings.TrimSpace(b.String())
}
