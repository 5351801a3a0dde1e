package manifest

import (
	"fmt"
	"strings"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
)

// MaxNameLen is the longest skill name accepted (SPEC §4).
const MaxNameLen = 64

var namePattern = lazyregexp.New(`^[A-Za-z0-9_-]+$`)

// Canonical returns the canonical form of a skill name: lowercase, with '_'
// changed to '-' ("Kalshi_Markets" -> "kalshi-markets"). Names that could
// escape a directory or collide with reserved paths are rejected with
// ErrInvalidName.
func Canonical(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w %q: %s; use 1-%d letters, digits, '-' or '_'", ErrInvalidName, name, why, MaxNameLen)
	}
	switch {
	case name == "":
		return bad("the name is empty")
	case name == "." || name == ".." || name == "~":
		return bad("the name is reserved")
	case strings.EqualFold(name, "__pycache__"):
		return bad("the name is reserved")
	case strings.Contains(name, ".."), strings.ContainsAny(name, `/\`):
		return bad("it contains a path separator or '..'")
	case strings.ContainsFunc(name, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }):
		return bad("it contains white space")
	case len(name) > MaxNameLen:
		return bad(fmt.Sprintf("it is %d characters long", len(name)))
	case !namePattern.MatchString(name):
		return bad("it contains a character other than a letter, digit, '-' or '_'")
	}
	return strings.ToLower(strings.ReplaceAll(name, "_", "-")), nil
}

// SameName reports whether a and b name the same skill.
func SameName(a, b string) bool {
	ca, err1 := Canonical(a)
	cb, err2 := Canonical(b)
	return err1 == nil && err2 == nil && ca == cb
}

// RecoverName turns a display name into a canonical one (SPEC §3):
// lowercase, each run of characters other than ASCII letters, digits, '-'
// and '_' becomes '-', cut to MaxNameLen. "Hook Development" gives
// "hook-development". Leading and trailing '-' are dropped; the result may
// be empty. The caller still checks it with Canonical.
func RecoverName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > MaxNameLen {
		s = strings.TrimRight(s[:MaxNameLen], "-")
	}
	return strings.ReplaceAll(s, "_", "-")
}

// Suggest returns the candidate closest to name, for a "did you mean": at
// most one edit away for names of up to four characters, two up to eight,
// three beyond (an edit being an insertion, deletion, substitution or swap
// of neighbours, compared case-insensitively with '_' as '-'), or one that
// starts with name. "" when none is close.
func Suggest(name string, candidates []string) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "-")) }
	n := norm(name)
	limit := 3
	switch {
	case len(n) <= 4:
		limit = 1
	case len(n) <= 8:
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		cn := norm(c)
		if cn == n {
			continue
		}
		d := editDistance(n, cn)
		if d > limit && len(n) >= 3 && strings.HasPrefix(cn, n) {
			d = limit
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		if a == b {
			return 0
		}
		return 1 << 30
	}
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
