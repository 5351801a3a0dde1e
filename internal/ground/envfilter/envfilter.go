package envfilter

import (
	"net/url"
	"slices"
	"strings"
)

// secretSubstrings mark a variable as a secret wherever they stand in its
// name (any case): PGPASSWORD, OPENAIAPIKEY, GOOGLE_APPLICATION_CREDENTIALS.
// Each is long and specific enough not to occur in other words, apart
// from SECRETARY, which is a price worth paying.
var secretSubstrings = []string{"PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "APIKEY", "PRIVATE_KEY"}

// secretSegments are the name segments (split on '_', any case) that mark
// a variable as a secret: OPENAI_API_KEY, GH_TOKEN, GITHUB_PAT, DB_DSN,
// SSH_AUTH_SOCK, SLACK_WEBHOOK_URL, PWD. Whole segments only, so
// KEYBOARD, MONKEY, TOKENIZERS_PARALLELISM, PATH and OLDPWD pass.
var secretSegments = []string{"TOKEN", "KEY", "PAT", "PWD", "DSN", "AUTH", "WEBHOOK"}

// Secret reports whether the variable name=value holds a secret: by its
// name (secretSubstrings, secretSegments), or by its value (a URL with a
// password, a password= field of a connection string, a token of a
// well-known service).
func Secret(name, value string) bool {
	return secretName(name) || SecretValue(value)
}

func secretName(name string) bool {
	// Names are upper case in practice, and ToUpper returns those as
	// they are, without allocating.
	upper := strings.ToUpper(name)
	for _, s := range secretSubstrings {
		if strings.Contains(upper, s) {
			return true
		}
	}
	for seg := range strings.SplitSeq(upper, "_") {
		if slices.Contains(secretSegments, seg) {
			return true
		}
	}
	return false
}

// SecretValue reports whether value holds a secret whatever the variable
// is called: a URL whose user part has a password
// (https://user:pass@host), a password field of a connection string
// (`host=db password=x`, `Server=s;Pwd=x`), or a token that starts with a
// well-known prefix (ghp_, github_pat_, sk-, xoxb-, AKIA, glpat-, ...).
func SecretValue(value string) bool {
	return holdsPassword(value) || holdsPasswordField(value) || holdsToken(value)
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

// passwordKeys are the keys of a connection string's password field:
// libpq's `password=`, ODBC's `PWD=`, ADO.NET's `Password=`.
var passwordKeys = []string{"password", "passwd", "pwd"}

// holdsPasswordField reports whether value holds key=something for a key
// of passwordKeys (any case, spaces around '=' allowed, as libpq allows),
// where the key is a whole word: `sslpassword=` counts, `mypwd=` does not,
// `password=` with nothing after it does not.
func holdsPasswordField(value string) bool {
	if strings.IndexByte(value, '=') < 0 {
		return false
	}
	for i := 0; i < len(value); i++ {
		c := value[i] | 0x20 // lower case for letters
		if c != 'p' {
			continue
		}
		for _, k := range passwordKeys {
			if len(value)-i < len(k) || !strings.EqualFold(value[i:i+len(k)], k) {
				continue
			}
			// pwd must start a word (PWD=, ;Pwd=); password may end one
			// (sslpassword=).
			if k == "pwd" && i > 0 && isWordChar(value[i-1]) {
				continue
			}
			j := i + len(k)
			for j < len(value) && value[j] == ' ' {
				j++
			}
			if j >= len(value) || value[j] != '=' {
				continue
			}
			j++
			for j < len(value) && value[j] == ' ' {
				j++
			}
			if j < len(value) && value[j] != ';' && value[j] != '&' {
				return true
			}
		}
	}
	return false
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// tokenPrefix is a well-known prefix of a service's tokens, and the least
// number of token characters after it: enough that an ordinary word or
// path that happens to start the same way is not taken for a token.
type tokenPrefix struct {
	prefix string
	min    int
	// digit asks for a digit after the prefix: sk- starts words too.
	digit bool
	// upper asks for upper-case letters and digits only (AWS key IDs).
	upper bool
}

var tokenPrefixes = []tokenPrefix{
	{prefix: "ghp_", min: 20}, {prefix: "gho_", min: 20}, {prefix: "ghu_", min: 20},
	{prefix: "ghs_", min: 20}, {prefix: "ghr_", min: 20}, {prefix: "github_pat_", min: 20},
	{prefix: "glpat-", min: 20},
	{prefix: "sk-", min: 20, digit: true},
	{prefix: "xox", min: 12}, // xoxb-, xoxp-, xoxa-, ...: checked in isToken
	{prefix: "AKIA", min: 16, upper: true}, {prefix: "ASIA", min: 16, upper: true},
	{prefix: "hf_", min: 30}, {prefix: "npm_", min: 30}, {prefix: "pypi-", min: 50},
}

// tokenStarts are the first bytes of tokenPrefixes, and minToken the
// length of the shortest token they allow (xoxb- and 12 characters).
const (
	tokenStarts = "gsxAhnp"
	minToken    = 17
)

// holdsToken reports whether a word of value (a run of letters, digits,
// '_' and '-' that starts the value or follows a space, quote, '=', ':',
// ',', ';' or '|') starts with a token prefix and has enough characters
// after it. A word inside a path (/opt/sk-tools-...) does not count.
func holdsToken(value string) bool {
	for i := 0; i < len(value); {
		if !isTokenChar(value[i]) {
			i++
			continue
		}
		j := i
		for j < len(value) && isTokenChar(value[j]) {
			j++
		}
		if i == 0 || isTokenBoundary(value[i-1]) {
			if isToken(value[i:j]) {
				return true
			}
		}
		i = j
	}
	return false
}

func isToken(word string) bool {
	// Most words are short or start otherwise: the cheap test first.
	if len(word) < minToken || strings.IndexByte(tokenStarts, word[0]) < 0 {
		return false
	}
	for _, p := range tokenPrefixes {
		rest, ok := strings.CutPrefix(word, p.prefix)
		if !ok {
			continue
		}
		if p.prefix == "xox" {
			// Slack: xox, the letter of a token kind, '-'.
			if len(rest) < 2 || rest[1] != '-' || strings.IndexByte("abcdeprs", rest[0]) < 0 {
				continue
			}
			rest = rest[2:]
		}
		if len(rest) < p.min {
			continue
		}
		if p.upper && strings.IndexFunc(rest, func(r rune) bool { return !('A' <= r && r <= 'Z' || '0' <= r && r <= '9') }) >= 0 {
			continue
		}
		if p.digit && strings.IndexAny(rest, "0123456789") < 0 {
			continue
		}
		return true
	}
	return false
}

func isTokenChar(c byte) bool { return isWordChar(c) || c == '-' }

func isTokenBoundary(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '=', ':', ',', ';', '|':
		return true
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
