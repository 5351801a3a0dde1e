package audit

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/agentskills/agent/registry/manifest"
)

// compiled is a rule ready to run.
type compiled struct {
	Rule
	pats  []pattern
	excl  []*lazyregexp.Regexp
	only  []*lazyregexp.Regexp // Lines
	types map[string]bool      // nil: any
	check checkFunc
}

// pattern is a regexp with the literals one of which every match holds,
// so that a file without any of them is skipped without running the
// regexp (most rules match nothing in most files).
type pattern struct {
	re *lazyregexp.Regexp
	// lits is nil when no such set was found; then the regexp always runs.
	lits []literal
	// also are more such sets (the other parts of a concatenation, as in
	// "do not ... tell ... the user"): a line that lacks one of them is
	// not read by the regexp. lits alone, "user", is on most lines of a
	// skill's prose.
	also [][]literal
	// ids are the lits' ids in pf, the prefilter of the rule set.
	ids []int32
	pf  *prefilter
}

type literal struct {
	s    string
	fold bool // s is folded (foldString) and is looked for in the folded text
}

// compile readies r. Its regexps compile on first use: most rules find
// none of their literals in a skill, and compiling all 23 built-in rules'
// patterns was most of Load's time (issue 39: add with the audit within
// 1.1x of add without). The patterns are valid: a user's were compiled by
// parseRules, the built-in ones by TestBuiltinRulesPassTheirExamples.
func compile(r Rule) *compiled {
	c := &compiled{Rule: r}
	for _, p := range r.Patterns {
		lits := requiredLiterals(p)
		c.pats = append(c.pats, pattern{re: lazyregexp.Unlisted(p), lits: lits, also: alsoLiterals(p, lits)})
	}
	for _, p := range r.ExcludePatterns {
		c.excl = append(c.excl, lazyregexp.Unlisted(p))
	}
	for _, p := range r.Lines {
		c.only = append(c.only, lazyregexp.Unlisted(p))
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
	return c
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
	// An empty literal (a pattern of assertions only, such as \B) says
	// nothing: every text holds it.
	if !ok || len(lits) == 0 || minLen(lits) == 0 {
		return nil
	}
	return lits
}

// maxAlso bounds the sets a line is checked against besides lits.
const maxAlso = 4

// alsoLiterals returns the literal sets, other than lits, of the parts of
// the pattern's top-level concatenation: a match holds one literal of
// each. nil without lits (the whole text is read then).
func alsoLiterals(p string, best []literal) [][]literal {
	if best == nil {
		return nil
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return nil
	}
	var out [][]literal
	for _, sub := range re.Sub {
		l, _, ok := lits(sub)
		// A set of single characters (\s+ gives space, tab and the line
		// ends) is on nearly every line: it would only take the place
		// of a part that tells lines apart.
		if !ok || len(l) == 0 || minLen(l) < 2 || slices.Equal(l, best) {
			continue
		}
		out = append(out, l)
	}
	// The longest literals first: they are on the fewest lines.
	slices.SortStableFunc(out, func(a, b []literal) int { return minLen(b) - minLen(a) })
	return out[:min(len(out), maxAlso)]
}

func litsOf(re *syntax.Regexp) ([]literal, bool) {
	l, _, ok := lits(re)
	return l, ok
}

// lits returns a set of literals one of which every match of re holds;
// exact says that the set is every string re matches (so that a
// concatenation may join it with its neighbours: i(?:wr|rm) is iwr, irm).
func lits(re *syntax.Regexp) (out []literal, exact, ok bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return []literal{{}}, true, true
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold {
			s = foldString(s)
		}
		return []literal{{s: s, fold: fold}}, true, true
	case syntax.OpCapture:
		return lits(re.Sub[0])
	case syntax.OpPlus:
		l, _, ok := lits(re.Sub[0])
		return l, false, ok
	case syntax.OpRepeat:
		if re.Min >= 1 {
			l, _, ok := lits(re.Sub[0])
			return l, false, ok
		}
	case syntax.OpConcat:
		var best []literal
		var run []literal // the product of the exact subs so far
		consider := func(l []literal) {
			if l != nil && minLen(l) > 0 && (best == nil || minLen(l) > minLen(best)) {
				best = l
			}
		}
		allExact := true
		for _, sub := range re.Sub {
			l, ex, ok := lits(sub)
			switch {
			case ok && ex && run != nil && len(run)*len(l) <= maxLiterals:
				run = product(run, l)
			case ok && ex:
				consider(run)
				run = l
			default:
				allExact = false
				consider(run)
				run = nil
				if ok {
					consider(l)
				}
			}
		}
		if allExact && run != nil && (best == nil || minLen(run) >= minLen(best)) {
			return run, true, true
		}
		consider(run)
		return best, false, best != nil
	case syntax.OpAlternate:
		exact := true
		for _, sub := range re.Sub {
			l, ex, ok := lits(sub)
			if !ok || minLen(l) == 0 {
				return nil, false, false
			}
			exact = exact && ex
			out = append(out, l...)
			if len(out) > maxLiterals {
				return nil, false, false
			}
		}
		return out, exact, true
	case syntax.OpCharClass:
		n := 0
		for i := 0; i < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
		}
		if n <= 16 {
			// Case folding gives classes such as [Kk\x{212A}]: each rune
			// is looked for in the folded text.
			fold := re.Flags&syntax.FoldCase != 0
			seen := map[string]bool{}
			for i := 0; i < len(re.Rune); i += 2 {
				for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
					s := string(r)
					if fold {
						s = foldString(s)
					}
					if !seen[s] {
						seen[s] = true
						out = append(out, literal{s: s, fold: fold})
					}
				}
			}
			return out, true, true
		}
		// A wide class of runes whose UTF-8 forms share their first
		// bytes (the tag characters: F3 A0): those bytes.
		if p := classPrefix(re.Rune); len(p) >= 2 {
			return []literal{{s: p}}, false, true
		}
	}
	return nil, false, false
}

// product joins every literal of a with every one of b.
func product(a, b []literal) []literal {
	out := make([]literal, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			// A folded part makes the whole folded: fold the plain one.
			switch {
			case x.fold == y.fold:
				out = append(out, literal{s: x.s + y.s, fold: x.fold})
			case x.fold:
				out = append(out, literal{s: x.s + foldString(y.s), fold: true})
			default:
				out = append(out, literal{s: foldString(x.s) + y.s, fold: true})
			}
		}
	}
	return out
}

// classPrefix is the longest byte prefix the UTF-8 forms of every rune
// of the ranges share.
func classPrefix(ranges []rune) string {
	var prefix []byte
	for i, r := range ranges {
		b := utf8.AppendRune(nil, r)
		if i == 0 {
			prefix = b
			continue
		}
		if len(b) != len(prefix) {
			return ""
		}
		j := 0
		for j < len(prefix) && prefix[j] == b[j] {
			j++
		}
		prefix = prefix[:j]
	}
	return string(prefix)
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
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, foldRune(r))
		i += n
	}
	return string(b)
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

// lines returns, in order, the lines of f (0-based) that hold one of p's
// literals; nil when p has none, and the whole text must be read.
func (p pattern) lines(f *file) []int {
	if p.lits == nil {
		return nil
	}
	seen := map[int]bool{}
	out := []int{}
	for _, l := range p.lits {
		if l.s == "" {
			continue
		}
		text, starts := f.text, f.starts
		if l.fold {
			text, starts = f.folded(), f.foldedStarts()
		}
		for off := 0; ; {
			i := strings.Index(text[off:], l.s)
			if i < 0 {
				break
			}
			i += off
			line := sort.SearchInts(starts, i+1) - 1
			if !seen[line] {
				seen[line] = true
				out = append(out, line)
			}
			// Past this line: one look per line is enough.
			if line+1 < len(starts) {
				off = starts[line+1]
			} else {
				break
			}
		}
	}
	sort.Ints(out)
	if len(p.also) == 0 {
		return out
	}
	kept := out[:0]
	for _, line := range out {
		if p.lineHoldsAlso(f, line) {
			kept = append(kept, line)
		}
	}
	return kept
}

// lineHoldsAlso reports whether line holds a literal of each of p.also.
func (p pattern) lineHoldsAlso(f *file, line int) bool {
	for _, set := range p.also {
		found := false
		for _, l := range set {
			text, starts := f.text, f.starts
			if l.fold {
				text, starts = f.folded(), f.foldedStarts()
			}
			end := len(text)
			if line+1 < len(starts) {
				end = starts[line+1]
			}
			if strings.Contains(text[starts[line]:end], l.s) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// mayMatch reports whether f holds one of p's literals.
func (p pattern) mayMatch(f *file) bool {
	if p.lits == nil {
		return true
	}
	if f.pf != nil && f.pf == p.pf {
		for _, id := range p.ids {
			if f.found[id] {
				return true
			}
		}
		return false
	}
	for _, l := range p.lits {
		if f.holds(l) {
			return true
		}
	}
	return false
}
