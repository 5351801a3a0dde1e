package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regexp.Regexp that compiles its pattern on first use.
type Regexp struct {
	str  string
	once sync.Once
	rx   *regexp.Regexp
}

// all holds every Regexp made, for CompileAll.
var all []*Regexp

// New returns a Regexp for str. A bad pattern panics on first use, as
// regexp.MustCompile would at init; a test that links every package calls
// CompileAll so that no bad pattern reaches a user.
func New(str string) *Regexp {
	r := &Regexp{str: str}
	all = append(all, r)
	return r
}

// CompileAll compiles every Regexp made so far and reports the first bad
// pattern. For tests.
func CompileAll() error {
	for _, r := range all {
		if _, err := regexp.Compile(r.str); err != nil {
			return err
		}
	}
	return nil
}

// Unlisted returns a Regexp for str that CompileAll does not see: for
// patterns made at run time (the audit's rules), which their own loader
// checks, and which must not pile up in a global list.
func Unlisted(str string) *Regexp { return &Regexp{str: str} }

// Re returns the compiled regexp.
func (r *Regexp) Re() *regexp.Regexp {
	r.once.Do(func() { r.rx = regexp.MustCompile(r.str) })
	return r.rx
}

func (r *Regexp) MatchString(s string) bool            { return r.Re().MatchString(s) }
func (r *Regexp) FindString(s string) string           { return r.Re().FindString(s) }
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Re().FindStringSubmatch(s) }
func (r *Regexp) FindStringIndex(s string) []int       { return r.Re().FindStringIndex(s) }
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Re().FindAllStringIndex(s, n)
}
func (r *Regexp) FindAllString(s string, n int) []string { return r.Re().FindAllString(s, n) }
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Re().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Re().FindAllStringSubmatchIndex(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string { return r.Re().ReplaceAllString(src, repl) }
func (r *Regexp) SubexpIndex(name string) int              { return r.Re().SubexpIndex(name) }
func (r *Regexp) SubexpNames() []string                    { return r.Re().SubexpNames() }
func (r *Regexp) String() string                           { return r.str }

func (r *Regexp) FindSubmatch(b []byte) [][]byte { return r.Re().FindSubmatch(b) }
func (r *Regexp) FindAllSubmatchIndex(b []byte, n int) [][]int {
	return r.Re().FindAllSubmatchIndex(b, n)
}
