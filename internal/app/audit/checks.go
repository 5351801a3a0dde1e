package audit

import (
	"net"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/ground/envfilter"
	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/agentskills/agent/registry/manifest"
)

// emitFunc records a finding of the running rule on line (0-based) at
// column col with a detail; it returns false once the rule has found
// enough in this file. Lines outside the rule's file types, region or
// exclude patterns are dropped by it.
type emitFunc func(line, col int, detail string) bool

// checkFunc is a built-in check: what a rule names with check:.
type checkFunc func(c *compiled, f *file, m *manifest.Manifest, emit emitFunc)

var checks = map[string]checkFunc{
	"confusable":       checkConfusable,
	"hardcoded-secret": checkSecret,
	"encoded-blob":     checkBlob,
	"undeclared-host":  checkHost,
	"undeclared-path":  checkPath,
}

func checkNames() []string {
	var out []string
	for n := range checks {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// checkConfusable finds names that look ASCII and are not: a word of a
// markdown heading or of the front matter's name that mixes ASCII letters
// with non-ASCII ones whose Unicode skeleton (UTS #39) is ASCII, a name
// with any such letter, and file names of the same kind. A heading
// written wholly in another script is not one.
func checkConfusable(c *compiled, f *file, m *manifest.Manifest, emit emitFunc) {
	if l := confusableIn(path.Base(f.name), true); l != "" {
		emit(0, 1, "the file name "+strconv.QuoteToASCII(path.Base(f.name))+" "+l)
	}
	if f.regions == nil {
		return
	}
	for i := range f.lines() {
		line := f.line(i)
		var text string
		whole := false
		switch f.regions[i] {
		case inProse:
			t := strings.TrimLeft(line, " ")
			if !strings.HasPrefix(t, "#") {
				continue
			}
			text = strings.TrimLeft(t, "#")
		case inFrontMatter:
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok || (k != "name" && k != "display-name") {
				continue
			}
			text, whole = v, true
		default:
			continue
		}
		if l := confusableIn(text, whole); l != "" {
			if !emit(i, 1, l) {
				return
			}
		}
	}
}

// confusableIn describes the first confusable word of s, or "". whole
// asks about any letter (a name); otherwise only words that mix ASCII
// letters with confusable ones count.
func confusableIn(s string, whole bool) string {
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		ascii, fake := false, rune(0)
		for _, r := range w {
			if r < utf8.RuneSelf {
				ascii = true
				continue
			}
			if fake == 0 && looksASCII(r) {
				fake = r
			}
		}
		if fake != 0 && (ascii || whole) {
			sk, _ := skeleton(fake)
			return "\"" + Escape(w, 64) + "\" holds " + strconv.QuoteRuneToASCII(fake) + ", which looks like \"" + sk + "\""
		}
	}
	return ""
}

// confusable is a rune and the ASCII letter or digit it is confusable
// with (confusables_table.go).
type confusable struct {
	r  rune
	sk string
}

// skeleton returns the ASCII character a non-ASCII letter or digit looks
// like, if it is one of confusableTable.
func skeleton(r rune) (string, bool) {
	i := sort.Search(len(confusableTable), func(i int) bool { return confusableTable[i].r >= r })
	if i < len(confusableTable) && confusableTable[i].r == r {
		return confusableTable[i].sk, true
	}
	return "", false
}

// looksASCII reports whether r is a non-ASCII letter or digit whose
// skeleton is an ASCII letter or digit.
func looksASCII(r rune) bool {
	_, ok := skeleton(r)
	return ok
}

// placeholders mark a value as an example, not a secret.
var placeholders = []string{"your", "xxx", "example", "placeholder", "changeme", "change-me", "change_me", "<", ">", "${", "$(", "{{", "***", "...", "…", "dummy", "fake", "sample", "redacted", "replace", "insert", "todo", "mypassword", "mysecret", "secret@", "password@", "pass@", ":pass", ":password", "os.environ", "process.env", "getenv", "env[", "env.", "$"}

func isPlaceholder(v string) bool {
	l := strings.ToLower(v)
	for _, p := range placeholders {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// checkSecret finds secrets written into a file: a value the env filter
// takes for a secret whatever its name (a well-known token prefix, a URL
// with a password, a password= field), and a long random value given to a
// name the env filter takes for a secret's (API_KEY = "...").
func checkSecret(c *compiled, f *file, m *manifest.Manifest, emit emitFunc) {
	for i := range f.lines() {
		line := f.line(i)
		if len(line) < 8 {
			continue
		}
		found := ""
		for field := range strings.FieldsFuncSeq(line, isFieldBreak) {
			if mayBeSecret(field) && envfilter.SecretValue(field) && !isPlaceholder(field) && !weakSecret(field) {
				found = "a value that looks like a token or a password"
				break
			}
		}
		if found == "" {
			found = secretAssignment(line)
		}
		if found != "" && !emit(i, 1, found) {
			return
		}
	}
}

func isFieldBreak(r rune) bool {
	return r == ' ' || r == '\t' || r == '"' || r == '\'' || r == '`' || r == '(' || r == ')' || r == ',' || r == '<' || r == '>'
}

// mayBeSecret is what SecretValue could say yes to, cheaply: a URL with
// a user part, a key=value, or a word long enough for a token.
func mayBeSecret(field string) bool {
	if len(field) < 8 {
		return false
	}
	return strings.Contains(field, "@") && strings.Contains(field, "://") || strings.IndexByte(field, '=') >= 0 || len(field) >= 17
}

// envName spells a key as an environment variable's name.
var envName = strings.NewReplacer("-", "_", ".", "_")

// secretAssignment finds NAME = "value" (or NAME: value) where the env
// filter takes NAME for a secret's name and value looks generated.
func secretAssignment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] != '=' && line[i] != ':' {
			continue
		}
		// The name: identifier characters before, past a closing quote
		// and spaces.
		j := i
		for j > 0 && (line[j-1] == ' ' || line[j-1] == '"' || line[j-1] == '\'') {
			j--
		}
		k := j
		for k > 0 && isNameChar(line[k-1]) {
			k--
		}
		if k == j {
			continue
		}
		// The value: past '=' of ':=', spaces and an opening quote.
		v := i + 1
		for v < len(line) && (line[v] == '=' || line[v] == ' ' || line[v] == '"' || line[v] == '\'') {
			v++
		}
		e := v
		for e < len(line) && !strings.ContainsRune(" \t\"',;)`", rune(line[e])) {
			e++
		}
		name, value := line[k:j], line[v:e]
		// A URL's query parameter (?token=) and a UUID are identifiers
		// more often than secrets.
		if len(value) < 16 || k > 0 && strings.ContainsRune("?&;", rune(line[k-1])) || isUUID(value) {
			continue
		}
		if envfilter.Secret(strings.ToUpper(envName.Replace(name)), "") && randomLooking(value) && !isPlaceholder(value) {
			return name + " is given a literal value"
		}
	}
	return ""
}

// isUUID reports the 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if s[i] != '-' {
				return false
			}
		} else if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func isNameChar(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b == '.'
}

// weakSecret reports whether the secret part of a field the env filter
// flagged is too short or too plain to be a real one: the password of
// user:pwd@host or of password=value under 8 characters, or a word
// (password=hash_password, --password=secret123), or a placeholder in
// capitals (--password=PASSWORD).
func weakSecret(field string) bool {
	secret := ""
	switch {
	case strings.Contains(field, "://") && strings.Contains(field, "@"):
		auth := field[strings.Index(field, "://")+3:]
		auth, _, _ = strings.Cut(auth, "/")
		userinfo := auth[:strings.LastIndex(auth, "@")+1]
		_, secret, _ = strings.Cut(strings.TrimSuffix(userinfo, "@"), ":")
	case strings.Contains(field, "="):
		secret = field[strings.LastIndex(field, "=")+1:]
		secret = strings.TrimRight(secret, ";&")
	default:
		// A token prefix: the env filter already asked for its length.
		return fakeToken(field)
	}
	if len(secret) < 8 {
		return true
	}
	return wordLike(secret) || fakeToken(secret) || strings.Trim(secret, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
}

// wordLike reports whether s holds a run of 5 or more lower-case letters
// or a call: passwords in examples are words (secret123, hash_password(x)).
func wordLike(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if 'a' <= s[i] && s[i] <= 'z' {
			run++
			if run >= 5 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// fakeToken reports an obviously made-up token: counting digits or
// letters (1234567, abcdef), or one character repeated.
func fakeToken(s string) bool {
	l := strings.ToLower(s)
	for _, seq := range []string{"1234567", "abcdef", "000000", "aaaaaa", "xxxxxx"} {
		if strings.Contains(l, seq) {
			return true
		}
	}
	return false
}

// randomLooking reports whether v reads as a generated secret: 16 or
// more characters of letters and digits (and -_+/=.), holding both, and
// not a word, a path or a call.
func randomLooking(v string) bool {
	if len(v) < 16 || strings.ContainsAny(v, "/\\ ()[]") {
		return false
	}
	letters, digits := 0, 0
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			letters++
		case r >= '0' && r <= '9':
			digits++
		case strings.ContainsRune("-_+=.", r):
		default:
			return false
		}
	}
	if letters < 4 || digits < 3 || fakeToken(v) {
		return false
	}
	// A run of 7 letters of one case is a word: payment_abc123_attempt1.
	run, lastUpper := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		isLower, isUpper := 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z'
		switch {
		case isLower && (run == 0 || !lastUpper), isUpper && (run == 0 || lastUpper):
			run++
			lastUpper = isUpper
		case isLower || isUpper:
			run, lastUpper = 1, isUpper
		default:
			run = 0
		}
		if run >= 7 {
			return false
		}
	}
	return true
}

// checkBlob finds long encoded runs: base64 (256 or more characters of
// its alphabet without a break) and hex (256 or more hex digits, or 32 or
// more \xNN escapes in a row).
func checkBlob(c *compiled, f *file, m *manifest.Manifest, emit emitFunc) {
	const minRun = 256
	t := f.text
	for i := 0; i < len(t); {
		j := i
		hex := true
		for j < len(t) && isBase64(t[j]) {
			if !isHex(t[j]) {
				hex = false
			}
			j++
		}
		if j-i >= minRun && (hex || looksEncoded(t[i:j])) && !encodedMedia(t[i:j]) {
			kind := "base64"
			if hex {
				kind = "hex"
			}
			line := f.lineAt(i)
			if !emit(line, utf8.RuneCountInString(t[f.starts[line]:i])+1, strconv.Itoa(j-i)+" characters of "+kind) {
				return
			}
		}
		if j == i {
			j++
		}
		// \xNN runs.
		if j < len(t) && t[j] == '\\' {
			k, n := j, 0
			for k+3 < len(t) && t[k] == '\\' && t[k+1] == 'x' && isHex(t[k+2]) && isHex(t[k+3]) {
				k += 4
				n++
			}
			if n >= 32 {
				line := f.lineAt(j)
				if !emit(line, utf8.RuneCountInString(t[f.starts[line]:j])+1, strconv.Itoa(n)+` \x escapes`) {
					return
				}
			}
			if k > j {
				j = k
			}
		}
		i = j
	}
}

// looksEncoded reports whether a run of base64's alphabet mixes upper
// and lower case letters and digits, as encoded bytes do; a protein or
// DNA sequence, a long word or a run of one letter does not.
func looksEncoded(run string) bool {
	var upper, lower, digit bool
	for i := 0; i < len(run); i++ {
		switch b := run[i]; {
		case 'A' <= b && b <= 'Z':
			upper = true
		case 'a' <= b && b <= 'z':
			lower = true
		case '0' <= b && b <= '9':
			digit = true
		}
	}
	return upper && lower && digit
}

// mediaPrefixes are the base64 forms of the first bytes of images and
// fonts (PNG, JPEG, GIF, WebP's RIFF, SVG and XML text, WOFF, WOFF2,
// PDF): an icon written into a script is data, not hidden code.
var mediaPrefixes = []string{"iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "PHN2Zy", "PD94bWwg", "d09GR", "d09GMg", "JVBERi0"}

func encodedMedia(run string) bool {
	for _, p := range mediaPrefixes {
		if strings.HasPrefix(run, p) {
			return true
		}
	}
	return false
}

func isBase64(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '='
}

func isHex(b byte) bool { return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' }

// benignHosts never need declaring: this machine, and names reserved for
// examples and tests (RFC 2606, RFC 6761).
func benignHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "0.0.0.0" || h == "::1" || h == "[::1]" {
		return true
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	for _, s := range []string{"example.com", "example.org", "example.net", "example"} {
		if h == s || strings.HasSuffix(h, "."+s) {
			return true
		}
	}
	for _, s := range []string{".test", ".invalid", ".local", ".internal", ".localdomain"} {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	// Not a host name at all (….git), templates and placeholders:
	// {host}, $HOST, <host>, YOUR_HOST.
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '[' || c == ']' || c == ':') {
			return true
		}
	}
	return !strings.Contains(h, ".") || strings.ContainsAny(h, "{}$<>%*") || strings.Contains(h, "your")
}

// checkHost finds URLs whose host permissions.network does not list, in
// code (scripts, and fenced code in markdown where the rule reads it).
func checkHost(c *compiled, f *file, m *manifest.Manifest, emit emitFunc) {
	net := m.Permissions.Network
	if slices.Contains(net, "*") {
		return
	}
	reported := map[string]bool{}
	t := f.text
	for off := 0; ; {
		i := strings.Index(t[off:], "://")
		if i < 0 {
			return
		}
		i += off
		off = i + 3
		start, scheme := urlScheme(t, i)
		if scheme == "" {
			continue
		}
		host, port := urlHost(t[i+3:])
		if host == "" || reported[host] || benignHost(host) || hostAllowed(net, scheme, host, port) {
			continue
		}
		line := f.lineAt(start)
		if !c.lineApplies(f, line) {
			continue
		}
		reported[host] = true
		hp := host
		if port != "" {
			hp += ":" + port
		}
		detail := hp + " (permissions.network lists nothing)"
		if len(net) > 0 {
			detail = hp + " (permissions.network lists " + strings.Join(net, ", ") + ")"
		}
		if !emit(line, utf8.RuneCountInString(t[f.starts[line]:start])+1, detail) {
			return
		}
	}
}

// urlScheme returns where the scheme before "://" at i starts and the
// scheme (lower case), if it is http, https, ws or wss and starts a word.
func urlScheme(t string, i int) (int, string) {
	s := i
	for s > 0 && i-s < 5 && isLetter(t[s-1]) {
		s--
	}
	if s > 0 && (isLetter(t[s-1]) || '0' <= t[s-1] && t[s-1] <= '9' || t[s-1] == '_') {
		return 0, ""
	}
	switch scheme := strings.ToLower(t[s:i]); scheme {
	case "http", "https", "ws", "wss":
		return s, scheme
	}
	return 0, ""
}

func isLetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// urlHost reads the authority after "://": the host (lower case, without
// a trailing dot) and the port, past any user part.
func urlHost(t string) (host, port string) {
	end := 0
	for end < len(t) && !strings.ContainsRune("/?#\"'<>()[]{}\\` ,;|\t\r\n", rune(t[end])) {
		end++
	}
	auth := t[:end]
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	host = auth
	if c := strings.LastIndexByte(auth, ':'); c >= 0 {
		host, port = auth[:c], auth[c+1:]
		for j := 0; j < len(port); j++ {
			if port[j] < '0' || port[j] > '9' {
				port = ""
				break
			}
		}
	}
	return strings.ToLower(strings.TrimSuffix(host, ".")), port
}

// hostAllowed reports whether a permissions.network entry (host:port,
// host, *.domain[:port]) admits the URL's host and port.
func hostAllowed(entries []string, scheme, host, port string) bool {
	if port == "" {
		switch scheme {
		case "http", "ws":
			port = "80"
		default:
			port = "443"
		}
	}
	for _, e := range entries {
		eh, ep, err := net.SplitHostPort(e)
		if err != nil {
			eh, ep = e, ""
		}
		eh = strings.ToLower(strings.TrimSuffix(eh, "."))
		if ep != "" && ep != "*" && ep != port {
			continue
		}
		if eh == host || eh == "*" || strings.HasPrefix(eh, "*.") && strings.HasSuffix(host, eh[1:]) {
			return true
		}
	}
	return false
}

var pathRx = lazyregexp.New(`(?:^|[\s"'=(\x60])((?:~|\$HOME|\$\{HOME\}|%USERPROFILE%)/[A-Za-z0-9._/-]+|/(?:etc|root|home|Users|var|opt|srv|mnt|proc|sys|Library|private)/[A-Za-z0-9._/-]*)`)

// benignPaths may be used without declaring: temp folders, devices, the
// usual places of programs.
var benignPaths = []string{"/tmp", "/var/tmp", "/private/tmp", "/private/var/folders", "/var/folders", "/dev/", "/proc/self", "/proc/cpuinfo", "/proc/meminfo", "/etc/os-release", "/etc/hosts", "/etc/localtime", "/etc/timezone", "/etc/ssl/certs", "/opt/homebrew/bin", "/usr/", "/bin/"}

// checkPath finds paths outside the skill's folder that permissions.fs
// does not declare, in code.
func checkPath(c *compiled, f *file, m *manifest.Manifest, emit emitFunc) {
	if !mayHavePath(f.text) {
		return
	}
	declared := slices.Concat(m.Permissions.FS.Read, m.Permissions.FS.Write)
	reported := map[string]bool{}
	for _, loc := range pathRx.FindAllStringSubmatchIndex(f.text, -1) {
		p := strings.TrimRight(f.text[loc[2]:loc[3]], "./")
		if reported[p] || pathDeclared(declared, p) {
			continue
		}
		line := f.lineAt(loc[2])
		if line == 0 && strings.HasPrefix(f.text, "#!") {
			continue
		}
		if !c.lineApplies(f, line) {
			continue
		}
		reported[p] = true
		detail := p + " (permissions.fs declares nothing)"
		if len(declared) > 0 {
			detail = p + " (permissions.fs declares " + strings.Join(declared, ", ") + ")"
		}
		if !emit(line, utf8.RuneCountInString(f.text[f.starts[line]:loc[2]])+1, detail) {
			return
		}
	}
}

// pathStarts are what a path pathRx finds must hold.
var pathStarts = []string{"~/", "$HOME", "${HOME}", "%USERPROFILE%", "/etc/", "/root/", "/home/", "/Users/", "/var/", "/opt/", "/srv/", "/mnt/", "/proc/", "/sys/", "/Library/", "/private/"}

func mayHavePath(t string) bool {
	for _, s := range pathStarts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// pathDeclared reports whether p is under a declared path or a benign
// one. ~, $HOME and %USERPROFILE% are one home.
func pathDeclared(declared []string, p string) bool {
	home := func(s string) string {
		for _, h := range []string{"$HOME", "${HOME}", "%USERPROFILE%"} {
			if rest, ok := strings.CutPrefix(s, h); ok {
				return "~" + rest
			}
		}
		return s
	}
	p = home(p)
	if p == "" || p == "~" {
		return false
	}
	for _, b := range benignPaths {
		if p == strings.TrimSuffix(b, "/") || strings.HasPrefix(p, strings.TrimSuffix(b, "/")+"/") {
			return true
		}
	}
	for _, d := range declared {
		d = strings.TrimRight(home(d), "/")
		if d == "" || strings.HasPrefix(d, "$WORKSPACE") || strings.HasPrefix(d, "$TMP") {
			continue
		}
		if p == d || strings.HasPrefix(p, d+"/") || d == "~" && strings.HasPrefix(p, "~/") || d == "/" {
			return true
		}
	}
	return false
}
