package envfilter

import (
	"net/url"
	"slices"
	"strings"
)

// secretSegments are the name segments (split on '_', any case) that mark
// a variable as a secret: OPENAI_API_KEY, GH_TOKEN, DB_PASSWORD, PWD.
// Whole segments only, so KEYBOARD and TOKENIZERS_PARALLELISM pass.
var secretSegments = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PWD", "CREDENTIALS"}

// secretNames are secrets whose names have no such segment.
var secretNames = []string{"SSH_AUTH_SOCK", "GOOGLE_APPLICATION_CREDENTIALS"}

// Secret reports whether the variable name=value holds a secret: a name
// with a secret segment, a known credential variable, or a value holding
// a URL with a password (https://user:pass@host).
func Secret(name, value string) bool {
	upper := strings.ToUpper(name)
	if slices.Contains(secretNames, upper) {
		return true
	}
	for seg := range strings.SplitSeq(upper, "_") {
		if slices.Contains(secretSegments, seg) {
			return true
		}
	}
	return holdsPassword(value)
}

// holdsPassword reports whether value holds a URL whose user part has a
// password. Values may hold several URLs (PIP_EXTRA_INDEX_URL), so each
// field that looks like one is parsed.
func holdsPassword(value string) bool {
	if !strings.Contains(value, "://") {
		return false
	}
	fields := strings.FieldsFunc(value, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == ',' || r == ';' || r == '"' || r == '\'' || r == '|'
	})
	for _, f := range fields {
		i := strings.Index(f, "://")
		if i < 0 {
			continue
		}
		// Whatever precedes the scheme (a "name=" of a list) is not part
		// of the URL.
		start := i
		for start > 0 && isSchemeChar(f[start-1]) {
			start--
		}
		u, err := url.Parse(f[start:])
		if err != nil {
			// An unparsable authority with a user:pass@ shape still
			// holds a password.
			auth, _, _ := strings.Cut(f[i+3:], "/")
			if user, _, ok := strings.Cut(auth, "@"); ok && strings.Contains(user, ":") {
				return true
			}
			continue
		}
		if u.User != nil {
			if _, ok := u.User.Password(); ok {
				return true
			}
		}
	}
	return false
}

func isSchemeChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'
}

// Match reports whether name matches a permissions.env pattern, where '*'
// stands for any run of characters and everything else is literal.
func Match(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, last) && len(name) >= len(last)
}

// MatchAny reports whether name matches one of patterns.
func MatchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if Match(p, name) {
			return true
		}
	}
	return false
}

// Names reports whether names holds name itself: a pattern with '*' never
// names a secret, so `*` or `OPENAI_*` in permissions.env does not hand
// over OPENAI_API_KEY; the whole name does.
func Names(names []string, name string) bool {
	return slices.Contains(names, name)
}

// Policy is what one process may see of the host's environment.
type Policy struct {
	// Base names pass whatever Allow says (PATH, HOME, ...); nil with All
	// unset passes only what Allow admits.
	Base []string
	// All admits every variable (the `base` skill's commands get the
	// host's environment less secrets).
	All bool
	// Allow is the skill's permissions.env patterns.
	Allow []string
	// Pass is the configuration's list of secrets to hand over
	// (pass_env), each a whole name. A secret passes only when Allow or
	// Pass names it in full.
	Pass []string
}

// Admits reports whether the variable name=value passes p.
func (p Policy) Admits(name, value string) bool {
	if !p.All && !slices.Contains(p.Base, name) && !MatchAny(p.Allow, name) {
		return false
	}
	return !Secret(name, value) || Names(p.Allow, name) || Names(p.Pass, name)
}

// Filter returns the entries of environ (NAME=value) that p admits, in
// their order. Entries without a name are dropped.
func (p Policy) Filter(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if p.Admits(name, value) {
			out = append(out, kv)
		}
	}
	return out
}
