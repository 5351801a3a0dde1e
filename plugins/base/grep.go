package base

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// GrepInput is grep_files's input.
type GrepInput struct {
	Pattern string `json:"pattern" description:"RE2 regular expression, matched line by line; (?i) ignores case"`
	Include string `json:"include,omitempty" description:"Only files matching this glob, such as *.go, src/**/*.ts or *.{ts,tsx}"`
	Path    string `json:"path,omitempty" description:"Folder (or file) to search, relative to the workspace (default the workspace)"`
	Limit   int    `json:"limit,omitempty" description:"Most files to return (default 100, at most 2000)"`
}

// GrepResult lists matching files, the most recently changed first.
type GrepResult struct {
	Files     []string `json:"files"`
	Truncated bool     `json:"truncated,omitempty"`
}

const (
	defaultGrepLimit = 100
	maxGrepLimit     = 2000
)

// lineMatcher answers "does any line of this file match?". A pattern with
// a literal prefix is searched for with bytes.Index first, and the regular
// expression runs only on the lines that hold the literal; a pattern that
// is all literal needs no regular expression at all. This is what makes a
// search as fast as grep on the patterns people type most.
type lineMatcher struct {
	re       *regexp.Regexp // one line
	multi    *regexp.Regexp // (?m) over the whole file
	lit      []byte
	complete bool
}

func newLineMatcher(pattern string) (*lineMatcher, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	multi, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		return nil, err
	}
	lit, complete := re.LiteralPrefix()
	m := &lineMatcher{re: re, multi: multi, lit: []byte(lit), complete: complete}
	if bytes.IndexByte(m.lit, '\n') >= 0 {
		m.lit, m.complete = nil, false
	}
	return m, nil
}

func (m *lineMatcher) match(b []byte) bool {
	if len(m.lit) > 0 {
		if m.complete {
			return bytes.Contains(b, m.lit)
		}
		for off := 0; off < len(b); {
			i := bytes.Index(b[off:], m.lit)
			if i < 0 {
				return false
			}
			i += off
			start := bytes.LastIndexByte(b[:i], '\n') + 1
			end := bytes.IndexByte(b[i:], '\n')
			if end < 0 {
				end = len(b)
			} else {
				end += i
			}
			if m.re.Match(b[start:end]) {
				return true
			}
			off = end + 1
		}
		return false
	}
	loc := m.multi.FindIndex(b)
	if loc == nil {
		return false
	}
	if bytes.IndexByte(b[loc[0]:loc[1]], '\n') < 0 {
		return true
	}
	// The match spans lines (\s or a negated class took a newline): look
	// line by line, as grep does.
	for len(b) > 0 {
		end := bytes.IndexByte(b, '\n')
		if end < 0 {
			end = len(b)
		}
		if m.re.Match(b[:end]) {
			return true
		}
		b = b[min(end+1, len(b)):]
	}
	return false
}

// include matches paths against a glob with gitignore's rules (no slash:
// any folder; ** across folders), after expanding {a,b}.
type include []gitignore.Pattern

func newInclude(glob string) (include, error) {
	if glob == "" {
		return nil, nil
	}
	globs, ok := expandBraces(glob, maxIncludeGlobs)
	if !ok {
		return nil, errorf(CodeInvalidArgs, "include %q expands to more than %d globs; use fewer {a,b} groups or run grep once per group", glob, maxIncludeGlobs)
	}
	var out include
	for _, g := range globs {
		out = append(out, gitignore.ParsePattern(g, nil))
	}
	return out, nil
}

func (in include) match(path []string) bool {
	if in == nil {
		return true
	}
	for _, p := range in {
		if p.Match(path, false) == gitignore.Exclude {
			return true
		}
	}
	return false
}

// maxIncludeGlobs bounds what {a,b} groups expand to: each group
// multiplies the count, so 40 groups of {x,y} would be 2^40 globs.
const maxIncludeGlobs = 256

// expandBraces expands the {a,b} groups of s left to right (no nesting:
// a group ends at the first '}'); ok is false when there would be more
// than limit globs. It works group by group rather than recursing on the
// rest of s, so a long run of groups costs neither stack nor a copy of s
// per group.
func expandBraces(s string, limit int) (out []string, ok bool) {
	globs := [][]byte{nil}
	for {
		i := strings.IndexByte(s, '{')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i:], '}')
		}
		if j < 0 {
			break
		}
		j += i
		alts := strings.Split(s[i+1:j], ",")
		if len(globs)*len(alts) > limit {
			return nil, false
		}
		next := make([][]byte, 0, len(globs)*len(alts))
		for _, g := range globs {
			g = append(g, s[:i]...)
			for k, alt := range alts {
				if k < len(alts)-1 {
					next = append(next, append(slices.Clip(g), alt...))
				} else {
					next = append(next, append(g, alt...))
				}
			}
		}
		globs, s = next, s[j+1:]
	}
	if len(globs) > limit {
		return nil, false
	}
	out = make([]string, len(globs))
	for k, g := range globs {
		out[k] = string(append(g, s...))
	}
	return out, true
}

// dirJob is one folder's files to search, with the folder held open.
type dirJob struct {
	dir   *os.Root
	rel   string
	names []string
}

type hit struct {
	path  string
	mtime time.Time
}

func (s *service) grep(ctx context.Context, in GrepInput) (GrepResult, string, error) {
	if in.Pattern == "" {
		return GrepResult{}, "", errorf(CodeInvalidArgs, "pattern is empty; give an RE2 regular expression such as \"func main\"")
	}
	if in.Limit < 0 {
		return GrepResult{}, "", errorf(CodeInvalidArgs, "limit must be positive")
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultGrepLimit
	}
	limit = min(limit, maxGrepLimit)
	m, err := newLineMatcher(in.Pattern)
	if err != nil {
		return GrepResult{}, "", errorf(CodeInvalidArgs, "pattern is not an RE2 regular expression: %v; escape special characters such as ( [ . with a backslash", err)
	}
	w, err := s.fs()
	if err != nil {
		return GrepResult{}, "", err
	}
	defer w.Close()
	inc, err := newInclude(in.Include)
	if err != nil {
		return GrepResult{}, "", err
	}
	hits, skipped, err := w.search(ctx, in.Path, m, inc)
	if err != nil {
		return GrepResult{}, "", err
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mtime.Equal(hits[j].mtime) {
			return hits[i].mtime.After(hits[j].mtime)
		}
		return hits[i].path < hits[j].path
	})
	res := GrepResult{Files: []string{}}
	for i, h := range hits {
		if i == limit {
			res.Truncated = true
			break
		}
		res.Files = append(res.Files, h.path)
	}
	msg := fmt.Sprintf("%d files match", len(hits))
	if res.Truncated {
		msg += fmt.Sprintf("; the %d most recently changed are listed, narrow the pattern, path or include, or raise limit", limit)
	}
	if skipped > 0 {
		msg += fmt.Sprintf("; %d binary or very large files were not searched", skipped)
	}
	return res, msg, nil
}

// search walks the folder p with .gitignore rules and searches its files
// in parallel.
func (w *fsys) search(ctx context.Context, p string, m *lineMatcher, inc include) ([]hit, int, error) {
	if p == "" {
		p = "."
	}
	f, rel, err := w.open(p)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, 0, w.fail(p, err)
	}
	jobs := make(chan dirJob, 64)
	var (
		mu      sync.Mutex
		hits    []hit
		skipped int
		wg      sync.WaitGroup
	)
	for range max(4, 2*runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 64<<10)
			for job := range jobs {
				for _, name := range job.names {
					if ctx.Err() != nil {
						break
					}
					var h hit
					var ok, skip bool
					h, buf, ok, skip = searchFile(job.dir, name, buf, m)
					if ok || skip {
						mu.Lock()
						if ok {
							h.path = filepath.Join(job.rel, name)
							hits = append(hits, h)
						} else {
							skipped++
						}
						mu.Unlock()
					}
				}
				job.dir.Close()
			}
		}()
	}
	var werr error
	if fi.IsDir() {
		werr = w.walk(ctx, rel, w.parentIgnores(rel), inc, jobs)
	} else {
		dir, name := filepath.Split(rel)
		d, err := w.root.OpenRoot(filepath.Clean(dir))
		if err != nil {
			werr = w.fail(p, err)
		} else {
			jobs <- dirJob{dir: d, rel: filepath.Clean(dir), names: []string{name}}
		}
	}
	close(jobs)
	wg.Wait()
	if werr == nil {
		werr = ctx.Err()
	}
	return hits, skipped, werr
}

// walk sends rel's files to jobs and descends into its folders. Ignored
// paths, .git, the state folder, AGENT_HOME and symbolic links are
// skipped, as `grep -r` skips links.
func (w *fsys) walk(ctx context.Context, rel string, ignore []gitignore.Pattern, inc include, jobs chan<- dirJob) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	d, err := w.root.OpenRoot(rel)
	if err != nil {
		return w.fail(rel, err)
	}
	f, err := d.Open(".")
	if err != nil {
		d.Close()
		return w.fail(rel, err)
	}
	if err := w.checkFile(f, rel); err != nil {
		f.Close()
		d.Close()
		return err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		d.Close()
		return nil // unreadable folder: skip it, as grep does
	}
	var domain []string
	if rel != "." {
		domain = strings.Split(rel, string(filepath.Separator))
	}
	for _, e := range ents {
		if e.Name() == ".gitignore" && e.Type().IsRegular() {
			if data, err := d.ReadFile(".gitignore"); err == nil {
				ignore = append(ignore[:len(ignore):len(ignore)], parseIgnore(data, domain)...)
			}
			break
		}
	}
	matcher := gitignore.NewMatcher(ignore)
	var names, dirs []string
	for _, e := range ents {
		name := e.Name()
		t := e.Type()
		if t&fs.ModeSymlink != 0 || (name == ".git" && t.IsDir()) {
			continue
		}
		child := filepath.Join(rel, name)
		if w.hidden(child) {
			continue
		}
		comps := append(domain[:len(domain):len(domain)], name)
		if len(ignore) > 0 && matcher.Match(comps, t.IsDir()) {
			continue
		}
		switch {
		case t.IsDir():
			dirs = append(dirs, child)
		case t.IsRegular() && inc.match(comps):
			names = append(names, name)
		}
	}
	if len(names) > 0 {
		jobs <- dirJob{dir: d, rel: rel, names: names}
	} else {
		d.Close()
	}
	for _, c := range dirs {
		if err := w.walk(ctx, c, ignore, inc, jobs); err != nil {
			return err
		}
	}
	return nil
}

// parentIgnores reads the .gitignore files of the folders above rel, so
// that searching a subfolder honours the rules of the workspace root.
func (w *fsys) parentIgnores(rel string) []gitignore.Pattern {
	clean := filepath.Clean(rel)
	if clean == "." {
		return nil
	}
	comps := strings.Split(clean, string(filepath.Separator))
	var out []gitignore.Pattern
	for i := range comps {
		domain := comps[:i]
		if data, err := w.root.ReadFile(filepath.Join(append(append([]string{}, domain...), ".gitignore")...)); err == nil {
			out = append(out, parseIgnore(data, domain)...)
		}
	}
	return out
}

func parseIgnore(data []byte, domain []string) []gitignore.Pattern {
	var out []gitignore.Pattern
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, gitignore.ParsePattern(line, domain))
	}
	return out
}

// searchFile reads one file into buf and matches it. skip is set for a
// binary or oversized file.
func searchFile(dir *os.Root, name string, buf []byte, m *lineMatcher) (h hit, _ []byte, ok, skip bool) {
	f, err := dir.Open(name)
	if err != nil {
		return h, buf, false, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return h, buf, false, false
	}
	if fi.Size() > maxEditBytes {
		return h, buf, false, true
	}
	// Read the size fstat gave, no more: one read per file, where reading
	// to EOF would cost a second. A file that grows meanwhile is searched
	// as it was.
	n := int(fi.Size())
	if cap(buf) < n {
		buf = make([]byte, 0, n+n/4)
	}
	b := buf[:n]
	got, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return h, buf, false, false
	}
	b = b[:got]
	if bytes.IndexByte(b[:min(len(b), sniffLen)], 0) >= 0 {
		return h, buf, false, true
	}
	if m.match(b) {
		return hit{mtime: fi.ModTime()}, buf, true, false
	}
	return h, buf, false, false
}
