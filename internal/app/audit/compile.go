package audit

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentskills/agent/registry/manifest"
)

// compiled is a rule ready to run.
type compiled struct {
	Rule
	pats  []pattern
	excl  []*regexp.Regexp
	types map[string]bool // nil: any
	check checkFunc
}

// pattern is a regexp with the literals one of which every match holds,
// so that a file without any of them is skipped without running the
// regexp (most rules match nothing in most files).
type pattern struct {
	re *regexp.Regexp
	// lits is nil when no such set was found; then the regexp always runs.
	lits []literal
}

type literal struct {
	s    string
	fold bool // s is folded (foldString) and is looked for in the folded text
}

func compile(r Rule) (*compiled, error) {
	c := &compiled{Rule: r}
	for _, p := range r.Patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		c.pats = append(c.pats, pattern{re: re, lits: requiredLiterals(p)})
	}
	for _, p := range r.ExcludePatterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, err
		}
		c.excl = append(c.excl, re)
	}
	for _, t := range r.FileTypes {
		if t == "any" {
			c.types = nil
			break
		}
		if c.types == nil {
			c.types = map[string]bool{}
		}
		c.types[t] = true
	}
	if r.Check != "" {
		c.check = checks[r.Check]
	}
	return c, nil
}

// exampleFile is the file an example is audited as: the first file type
// the rule reads.
func (c *compiled) exampleFile() string {
	t := "markdown"
	if len(c.FileTypes) > 0 && c.FileTypes[0] != "any" {
		t = c.FileTypes[0]
	}
	switch t {
	case "python":
		return "scripts/example.py"
	case "shell":
		return "scripts/example.sh"
	case "javascript":
		return "scripts/example.js"
	case "text":
		return "references/example.txt"
	}
	return "references/example.md"
}

// selfTest runs the rule's examples: each match sample must give a
// finding of this rule, each clean one none.
func (c *compiled) selfTest() error {
	m := &manifest.Manifest{Name: "example"}
	name := c.exampleFile()
	for i, s := range c.Examples.Match {
		if len(c.scan(newFile(name, []byte(s)), m)) == 0 {
			return fmt.Errorf("examples.match[%d] does not match as %s", i, name)
		}
	}
	for i, s := range c.Examples.Clean {
		if fs := c.scan(newFile(name, []byte(s)), m); len(fs) > 0 {
			return fmt.Errorf("examples.clean[%d] matches as %s at line %d", i, name, fs[0].Line)
		}
	}
	return nil
}

// maxLiterals bounds a prefilter set: past it the regexp is cheaper.
const maxLiterals = 32

// requiredLiterals returns a set of literals one of which every match of
// the pattern contains, or nil.
func requiredLiterals(p string) []literal {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil
	}
	lits, ok := litsOf(re.Simplify())
	if !ok || len(lits) == 0 {
		return nil
	}
	return lits
}

func litsOf(re *syntax.Regexp) ([]literal, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold {
			s = foldString(s)
		}
		return []literal{{s: s, fold: fold}}, true
	case syntax.OpCapture, syntax.OpPlus:
		return litsOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return litsOf(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []literal
		bestLen := 0
		for _, sub := range re.Sub {
			l, ok := litsOf(sub)
			if !ok {
				continue
			}
			if n := minLen(l); best == nil || n > bestLen {
				best, bestLen = l, n
			}
		}
		return best, best != nil
	case syntax.OpAlternate:
		var out []literal
		for _, sub := range re.Sub {
			l, ok := litsOf(sub)
			if !ok {
				return nil, false
			}
			out = append(out, l...)
			if len(out) > maxLiterals {
				return nil, false
			}
		}
		return out, true
	case syntax.OpCharClass:
		n := 0
		for i := 0; i < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
		}
		if n > 8 {
			return nil, false
		}
		var out []literal
		for i := 0; i < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, literal{s: string(r)})
			}
		}
		return out, true
	}
	return nil, false
}

func minLen(l []literal) int {
	n := -1
	for _, x := range l {
		if n < 0 || len(x.s) < n {
			n = len(x.s)
		}
	}
	return n
}

// foldString maps every rune to the least rune of its case-folding orbit,
// so that two strings equal under (?i) fold to the same string (K, k and
// the Kelvin sign all become K; ſ, s and S become S).
func foldString(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s)
	}
	return strings.Map(foldRune, s)
}

func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < min {
			min = f
		}
	}
	return min
}

// mayMatch reports whether f holds one of p's literals.
func (p pattern) mayMatch(f *file) bool {
	if p.lits == nil {
		return true
	}
	for _, l := range p.lits {
		if l.fold {
			if strings.Contains(f.folded(), l.s) {
				return true
			}
		} else if strings.Contains(f.text, l.s) {
			return true
		}
	}
	return false
}
