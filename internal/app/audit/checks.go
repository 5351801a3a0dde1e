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

	"github.com/mtibben/confusables"

	"github.com/agentskills/agent/internal/envfilter"
	"github.com/agentskills/agent/internal/lazyregexp"
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
			return "\"" + Escape(w, 64) + "\" holds " + strconv.QuoteRuneToASCII(fake) + ", which looks like \"" + confusables.Skeleton(string(fake)) + "\""
		}
	}
	return ""
}

// looksASCII reports whether r is a non-ASCII letter or digit whose
// skeleton is an ASCII letter or digit.
func looksASCII(r rune) bool {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
		return false
	}
	sk := confusables.Skeleton(string(r))
	if sk == "" || sk == string(r) {
		return false
	}
	for i := 0; i < len(sk); i++ {
		b := sk[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9') {
			return false
		}
	}
	return true
}

// literalRx finds quoted strings and the value of NAME=value or
// NAME: value.
var (
	quotedRx     = lazyregexp.New(`"([^"\\\n]{8,})"|'([^'\\\n]{8,})'|` + "`([^`\\n]{8,})`")
	assignmentRx = lazyregexp.New(`([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*(?::|=|:=)\s*["']?([^"'\s,;)]{8,})`)
)

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
		for _, field := range strings.FieldsFunc(line, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '"' || r == '\'' || r == '`' || r == '(' || r == ')' || r == ','
		}) {
			if len(field) >= 8 && envfilter.SecretValue(field) && !isPlaceholder(field) {
				found = "a value that looks like a token or a password"
				break
			}
		}
		if found == "" && strings.ContainsAny(line, "=:") {
			for _, sm := range assignmentRx.FindAllStringSubmatch(line, -1) {
				name, value := sm[1], sm[2]
				if envfilter.Secret(strings.ToUpper(strings.ReplaceAll(name, "-", "_")), "") && randomLooking(value) && !isPlaceholder(value) {
					found = name + " is given a literal value"
					break
				}
			}
		}
		if found != "" && !emit(i, 1, found) {
			return
		}
	}
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
	return letters >= 4 && digits >= 3
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
		if j-i >= minRun {
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

func isBase64(b byte) bool {
	return 'A' <= b && b <= 'Z' || 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '='
}

func isHex(b byte) bool { return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' }

var urlRx = lazyregexp.New(`(?i)\b(https?|wss?)://([^/\s"'<>()\[\]{}\\` + "`" + `,;|@]+@)?([^/\s"'<>()\[\]{}\\` + "`" + `,;|:?#]+)(:[0-9]{1,5})?`)

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
	// Templates and placeholders: {host}, $HOST, <host>, YOUR_HOST.
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
	for _, loc := range urlRx.FindAllStringSubmatchIndex(f.text, -1) {
		scheme := strings.ToLower(f.text[loc[2]:loc[3]])
		host := strings.ToLower(strings.TrimSuffix(f.text[loc[6]:loc[7]], "."))
		port := ""
		if loc[8] >= 0 {
			port = f.text[loc[8]+1 : loc[9]]
		}
		if reported[host] || benignHost(host) || hostAllowed(net, scheme, host, port) {
			continue
		}
		line := f.lineAt(loc[0])
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
		if !emit(line, utf8.RuneCountInString(f.text[f.starts[line]:loc[0]])+1, detail) {
			return
		}
	}
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
