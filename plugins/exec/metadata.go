package exec

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrMetadata marks a malformed PEP 723 block. It affects only the script
// that carries it.
var ErrMetadata = errors.New("invalid PEP 723 metadata")

// Metadata is what the host needs from a script's `# /// script` block.
type Metadata struct {
	RequiresPython string   `json:"requires_python,omitempty"`
	Dependencies   []string `json:"dependencies,omitempty"`
}

// pep723 is the reference regular expression from PEP 723. In multi-line
// mode Python's `$\s` can only match a newline, so `\n` is the same thing
// spelled for RE2, whose leftmost-first matching then picks the same block
// (the greedy content runs to the last `# ///` of a comment run).
var pep723 = regexp.MustCompile(`(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\n(?P<content>(?:^#(?:| .*)$\n)+)^# ///$`)

// ParseMetadata extracts the PEP 723 `script` block from a script's source.
// It returns nil, nil when there is none. The block may sit anywhere (after a
// shebang or a docstring); two `script` blocks are an error, as in the PEP.
// Only `requires-python` and `dependencies` are interpreted; other keys and
// tables (for example [tool.uv]) are checked for syntax and skipped.
func ParseMetadata(src []byte) (*Metadata, error) {
	var found []int
	for _, m := range pep723.FindAllSubmatchIndex(src, -1) {
		if string(src[m[2]:m[3]]) == "script" {
			if found != nil {
				return nil, fmt.Errorf("%w: more than one `# /// script` block (lines %d and %d); keep only one",
					ErrMetadata, lineOf(src, found[0]), lineOf(src, m[0]))
			}
			found = m
		}
	}
	if found == nil {
		return nil, nil
	}
	first := lineOf(src, found[4]) // line of the first content line
	content := src[found[4]:found[5]]
	if !utf8.Valid(content) {
		return nil, fmt.Errorf("%w: the `# /// script` block at line %d is not valid UTF-8", ErrMetadata, first-1)
	}
	var b strings.Builder
	for _, line := range pySplitLines(string(content)) {
		if strings.HasPrefix(line, "# ") {
			b.WriteString(line[2:])
		} else if line != "" {
			_, size := utf8.DecodeRuneInString(line)
			b.WriteString(line[size:])
		}
	}
	p := &tomlParser{src: b.String(), line: 1, lineBase: first - 1}
	md, err := p.parse()
	if err != nil {
		return nil, err
	}
	return md, nil
}

// lineOf returns the 1-based line number of byte offset off.
func lineOf(src []byte, off int) int {
	n := 1
	for _, c := range src[:off] {
		if c == '\n' {
			n++
		}
	}
	return n
}

// pySplitLines is Python's str.splitlines(keepends=True), which the PEP's
// reference implementation uses to strip the comment prefixes.
func pySplitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\r':
			end := i + size
			if end < len(s) && s[end] == '\n' {
				end++
			}
			out = append(out, s[start:end])
			start, i = end, end
			continue
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
			out = append(out, s[start:i+size])
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// tomlParser reads the small part of TOML that PEP 723 blocks use: key/value
// pairs, table headers, strings of all four kinds, arrays, inline tables and
// bare scalars (numbers, booleans, dates), which are skipped.
type tomlParser struct {
	src      string
	pos      int
	line     int // line inside the block, 1-based
	lineBase int // file line of the block's opening `# /// script`
	md       Metadata
	defined  map[string]byte // full key path -> 'v' value, 't' table, 'i' implicit table, 'a' array of tables
	table    []string        // the current table's path; nil at the root
	arrays   int             // counts [[...]] elements so each gets its own path
}

func (p *tomlParser) errf(format string, a ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrMetadata, p.lineBase+p.line, fmt.Sprintf(format, a...))
}

func (p *tomlParser) eof() bool { return p.pos >= len(p.src) }

func (p *tomlParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.src[p.pos]
}

func (p *tomlParser) skipSpace() {
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

// skipComment skips a `#` comment up to (not including) the newline.
func (p *tomlParser) skipComment() {
	if p.peek() != '#' {
		return
	}
	for !p.eof() && p.src[p.pos] != '\n' {
		p.pos++
	}
}

// newline consumes "\n" or "\r\n"; it reports whether it did.
func (p *tomlParser) newline() bool {
	if strings.HasPrefix(p.src[p.pos:], "\r\n") {
		p.pos += 2
	} else if p.peek() == '\n' {
		p.pos++
	} else {
		return false
	}
	p.line++
	return true
}

// skipBlank skips whitespace, comments and newlines (inside arrays and
// between statements).
func (p *tomlParser) skipBlank() {
	for {
		p.skipSpace()
		p.skipComment()
		if !p.newline() {
			return
		}
	}
}

// endOfLine requires the rest of the line to be blank or a comment.
func (p *tomlParser) endOfLine() error {
	p.skipSpace()
	p.skipComment()
	if p.eof() || p.newline() {
		return nil
	}
	return p.errf("unexpected %q after a value; put each key = value on its own line", p.src[p.pos])
}

func (p *tomlParser) parse() (*Metadata, error) {
	p.defined = map[string]byte{}
	root := true
	for {
		p.skipBlank()
		if p.eof() {
			break
		}
		if p.peek() == '[' {
			if err := p.tableHeader(); err != nil {
				return nil, err
			}
			root = false
			continue
		}
		keyLine := p.line
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.peek() != '=' {
			return nil, p.errf("expected '=' after key %q", strings.Join(key, "."))
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		if err := p.endOfLine(); err != nil {
			return nil, err
		}
		if err := p.define(append(append([]string(nil), p.table...), key...), 'v'); err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrMetadata, p.lineBase+keyLine, err)
		}
		if !root {
			continue
		}
		if len(key) > 1 && (key[0] == "requires-python" || key[0] == "dependencies") {
			return nil, fmt.Errorf("%w: line %d: %s must be a plain value, not a table", ErrMetadata, p.lineBase+keyLine, key[0])
		}
		switch name := strings.Join(key, "."); name {
		case "requires-python":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%w: line %d: requires-python must be a string, for example \">=3.11\"", ErrMetadata, p.lineBase+keyLine)
			}
			p.md.RequiresPython = s
		case "dependencies":
			arr, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%w: line %d: dependencies must be an array of strings, for example [\"requests<3\"]", ErrMetadata, p.lineBase+keyLine)
			}
			deps := make([]string, 0, len(arr))
			for _, e := range arr {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("%w: line %d: dependencies must be an array of strings, for example [\"requests<3\"]", ErrMetadata, p.lineBase+keyLine)
				}
				deps = append(deps, s)
			}
			p.md.Dependencies = deps
		}
	}
	md := p.md
	return &md, nil
}

func (p *tomlParser) tableHeader() error {
	p.pos++ // [
	double := p.peek() == '['
	if double {
		p.pos++
	}
	p.skipSpace()
	key, err := p.key()
	if err != nil {
		return err
	}
	if key[0] == "requires-python" || key[0] == "dependencies" {
		return p.errf("%s must be a plain value, not a table", key[0])
	}
	p.skipSpace()
	closer := "]"
	if double {
		closer = "]]"
	}
	if !strings.HasPrefix(p.src[p.pos:], closer) {
		return p.errf("table header is missing %q", closer)
	}
	p.pos += len(closer)
	kind := byte('t')
	if double {
		kind = 'a'
	}
	if err := p.define(key, kind); err != nil {
		return p.errf("%v", err)
	}
	p.table = key
	if double {
		// Keys of each array element are separate: give it its own path.
		p.arrays++
		p.table = append(key, "\x00"+strconv.Itoa(p.arrays))
	}
	return p.endOfLine()
}

// define records that path is a value ('v'), a table ('t') or an array of
// tables ('a'), refusing what TOML refuses: defining a key twice, or
// putting a key under something that is a value.
func (p *tomlParser) define(path []string, kind byte) error {
	name := strings.Join(path, ".")
	for i := 1; i < len(path); i++ {
		prefix := strings.Join(path[:i], "\x00")
		switch p.defined[prefix] {
		case 'v':
			return fmt.Errorf("cannot add %q under %q, which is already a value", name, strings.Join(path[:i], "."))
		case 0:
			p.defined[prefix] = 'i'
		}
	}
	full := strings.Join(path, "\x00")
	prev, ok := p.defined[full]
	switch {
	case !ok, kind == 't' && prev == 'i', kind == 'a' && prev == 'a':
		p.defined[full] = kind
		return nil
	case kind == 'v' || prev == 'v':
		return fmt.Errorf("key %q is defined twice", name)
	default:
		return fmt.Errorf("table [%s] is defined twice", name)
	}
}

// key reads a possibly dotted key: bare or quoted parts separated by dots.
func (p *tomlParser) key() ([]string, error) {
	var parts []string
	for {
		p.skipSpace()
		var part string
		switch c := p.peek(); {
		case c == '"':
			s, err := p.basicString()
			if err != nil {
				return nil, err
			}
			part = s
		case c == '\'':
			s, err := p.literalString()
			if err != nil {
				return nil, err
			}
			part = s
		case isBareKey(c):
			start := p.pos
			for !p.eof() && isBareKey(p.src[p.pos]) {
				p.pos++
			}
			part = p.src[start:p.pos]
		default:
			if p.eof() {
				return nil, p.errf("expected a key, found the end of the block")
			}
			return nil, p.errf("expected a key, found %q", c)
		}
		parts = append(parts, part)
		p.skipSpace()
		if p.peek() != '.' {
			return parts, nil
		}
		p.pos++
	}
}

func isBareKey(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

// value parses one value. Strings come back as string, arrays as []any;
// everything else as nil (it is skipped).
func (p *tomlParser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("values nested more than %d deep", maxDepth)
	}
	switch c := p.peek(); {
	case strings.HasPrefix(p.src[p.pos:], `"""`):
		return p.multiBasicString()
	case strings.HasPrefix(p.src[p.pos:], `'''`):
		return p.multiLiteralString()
	case c == '"':
		return p.basicString()
	case c == '\'':
		return p.literalString()
	case c == '[':
		return p.array(depth)
	case c == '{':
		return nil, p.inlineTable(depth)
	case isBareValue(c):
		start := p.pos
		p.bareValue()
		if v := p.src[start:p.pos]; !bareScalar.MatchString(v) {
			return nil, p.errf("%q is not a TOML value (strings need quotes)", v)
		}
		return nil, nil
	default:
		if p.eof() || c == '\n' || c == '\r' {
			return nil, p.errf("missing value after '='")
		}
		return nil, p.errf("unexpected %q where a value should start", c)
	}
}

// bareScalar is TOML 1.0's booleans, integers, floats and date-times (the
// digits of a date are not range-checked).
var bareScalar = regexp.MustCompile(`^(?:true|false|[+-]?(?:inf|nan)` +
	`|[+-]?(?:0|[1-9](?:_?[0-9])*)(?:\.[0-9](?:_?[0-9])*)?(?:[eE][+-]?[0-9](?:_?[0-9])*)?` +
	`|0x[0-9A-Fa-f](?:_?[0-9A-Fa-f])*|0o[0-7](?:_?[0-7])*|0b[01](?:_?[01])*` +
	`|[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?)?` +
	`|[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)$`)

func isBareValue(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '+' || c == '.' || c == ':'
}

// bareValue skips a number, boolean or date-time. A space may separate the
// date from the time ("1979-05-27 07:32:00Z").
func (p *tomlParser) bareValue() {
	for !p.eof() && isBareValue(p.src[p.pos]) {
		p.pos++
	}
	if p.pos+1 < len(p.src) && p.src[p.pos] == ' ' && p.src[p.pos+1] >= '0' && p.src[p.pos+1] <= '9' {
		p.pos++
		for !p.eof() && isBareValue(p.src[p.pos]) {
			p.pos++
		}
	}
}

func (p *tomlParser) array(depth int) ([]any, error) {
	p.pos++ // [
	out := []any{}
	for {
		p.skipBlank()
		if p.eof() {
			return nil, p.errf("array is not closed with ']'")
		}
		if p.peek() == ']' {
			p.pos++
			return out, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		p.skipBlank()
		switch p.peek() {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return out, nil
		default:
			if p.eof() {
				return nil, p.errf("array is not closed with ']'")
			}
			return nil, p.errf("expected ',' or ']' in an array, found %q", p.peek())
		}
	}
}

func (p *tomlParser) inlineTable(depth int) error {
	p.pos++ // {
	p.skipSpace()
	if p.peek() == '}' {
		p.pos++
		return nil
	}
	for {
		if _, err := p.key(); err != nil {
			return err
		}
		p.skipSpace()
		if p.peek() != '=' {
			return p.errf("expected '=' in an inline table")
		}
		p.pos++
		p.skipSpace()
		if _, err := p.value(depth + 1); err != nil {
			return err
		}
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			return nil
		default:
			return p.errf("expected ',' or '}' in an inline table")
		}
	}
}

func (p *tomlParser) literalString() (string, error) {
	p.pos++ // '
	start := p.pos
	for !p.eof() {
		switch c := p.src[p.pos]; {
		case c == '\'':
			s := p.src[start:p.pos]
			p.pos++
			return s, nil
		case c == '\n' || c == '\r':
			return "", p.errf("string is not closed on its line")
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errf("control character %q in a string", c)
		}
		p.pos++
	}
	return "", p.errf("string is not closed on its line")
}

func (p *tomlParser) multiLiteralString() (string, error) {
	p.pos += 3
	p.newline() // a newline right after the opening quotes is trimmed
	var b strings.Builder
	for !p.eof() {
		if strings.HasPrefix(p.src[p.pos:], `'''`) {
			// Up to two extra quotes may end the content (''''' is allowed).
			n := 3
			for n < 5 && p.pos+n < len(p.src) && p.src[p.pos+n] == '\'' {
				n++
			}
			b.WriteString(p.src[p.pos : p.pos+n-3])
			p.pos += n
			return b.String(), nil
		}
		if p.newline() {
			b.WriteByte('\n')
			continue
		}
		c := p.src[p.pos]
		if c < 0x20 && c != '\t' || c == 0x7f {
			return "", p.errf("control character %q in a string", c)
		}
		b.WriteByte(c)
		p.pos++
	}
	return "", p.errf("multi-line string is not closed with '''")
}

func (p *tomlParser) basicString() (string, error) {
	p.pos++ // "
	var b strings.Builder
	for !p.eof() {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
			continue
		case c == '\n' || c == '\r':
			return "", p.errf("string is not closed on its line")
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", p.errf("control character %q in a string", c)
		}
		b.WriteByte(c)
		p.pos++
	}
	return "", p.errf("string is not closed on its line")
}

func (p *tomlParser) multiBasicString() (string, error) {
	p.pos += 3
	p.newline()
	var b strings.Builder
	for !p.eof() {
		if strings.HasPrefix(p.src[p.pos:], `"""`) {
			n := 3
			for n < 5 && p.pos+n < len(p.src) && p.src[p.pos+n] == '"' {
				n++
			}
			b.WriteString(p.src[p.pos : p.pos+n-3])
			p.pos += n
			return b.String(), nil
		}
		if p.newline() {
			b.WriteByte('\n')
			continue
		}
		c := p.src[p.pos]
		if c == '\\' {
			// A backslash at the end of a line trims the newline and the
			// whitespace that follows it.
			save, saveLine := p.pos, p.line
			p.pos++
			p.skipSpace()
			if p.newline() {
				for {
					p.skipSpace()
					if !p.newline() {
						break
					}
				}
				continue
			}
			p.pos, p.line = save, saveLine
			if err := p.escape(&b); err != nil {
				return "", err
			}
			continue
		}
		if c < 0x20 && c != '\t' || c == 0x7f {
			return "", p.errf("control character %q in a string", c)
		}
		b.WriteByte(c)
		p.pos++
	}
	return "", p.errf(`multi-line string is not closed with """`)
}

// escape decodes one backslash escape at p.pos.
func (p *tomlParser) escape(b *strings.Builder) error {
	p.pos++ // backslash
	if p.eof() {
		return p.errf("string ends with a backslash")
	}
	c := p.src[p.pos]
	p.pos++
	simple := map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', '"': '"', '\\': '\\'}
	if r, ok := simple[c]; ok {
		b.WriteByte(r)
		return nil
	}
	n := map[byte]int{'u': 4, 'U': 8}[c]
	if n == 0 {
		return p.errf("invalid escape \\%c in a string", c)
	}
	if p.pos+n > len(p.src) {
		return p.errf("short \\%c escape in a string", c)
	}
	v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return p.errf("invalid \\%c escape %q in a string", c, p.src[p.pos:p.pos+n])
	}
	p.pos += n
	b.WriteRune(rune(v))
	return nil
}
