package exec

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/pelletier/go-toml/v2"
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
var pep723 = lazyregexp.New(`(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\n(?P<content>(?:^#(?:| .*)$\n)+)^# ///$`)

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
	return parseTOML(b.String(), first-1)
}

// parseTOML reads a block's TOML with go-toml and picks out the two keys
// the host uses. lineBase is the file line of the block's `# /// script`,
// so that messages name lines of the script.
func parseTOML(src string, lineBase int) (*Metadata, error) {
	var doc map[string]any
	if err := toml.Unmarshal([]byte(src), &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, fmt.Errorf("%w: line %d: %s", ErrMetadata, lineBase+row, de.Error())
		}
		if m := alreadyDefinedRE.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrMetadata, lineBase+lastKeyLine(src, m[1]), err)
		}
		return nil, fmt.Errorf("%w: %v", ErrMetadata, err)
	}
	md := &Metadata{}
	if v, ok := doc["requires-python"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%w: line %d: requires-python must be a string, for example \">=3.11\"", ErrMetadata, lineBase+keyLine(src, "requires-python"))
		}
		md.RequiresPython = s
	}
	if v, ok := doc["dependencies"]; ok {
		arr, ok := v.([]any)
		deps := make([]string, 0, len(arr))
		for _, e := range arr {
			s, isStr := e.(string)
			ok = ok && isStr
			deps = append(deps, s)
		}
		if !ok {
			return nil, fmt.Errorf("%w: line %d: dependencies must be an array of strings, for example [\"requests<3\"]", ErrMetadata, lineBase+keyLine(src, "dependencies"))
		}
		md.Dependencies = deps
	}
	return md, nil
}

// alreadyDefinedRE matches go-toml's duplicate key error, which carries no
// position.
var alreadyDefinedRE = lazyregexp.New(`key (\S+) is already defined`)

// keyLine and lastKeyLine are the 1-based lines of the first and last
// lines of src that start with key, for messages: go-toml reports no
// position for a value of the wrong type or a duplicate key.
func keyLine(src, key string) int {
	for i, l := range strings.Split(src, "\n") {
		if startsWithKey(l, key) {
			return i + 1
		}
	}
	return 1
}

func lastKeyLine(src, key string) int {
	n := 1
	for i, l := range strings.Split(src, "\n") {
		if startsWithKey(l, key) {
			n = i + 1
		}
	}
	return n
}

func startsWithKey(line, key string) bool {
	l := strings.TrimLeft(line, " \t")
	l = strings.TrimPrefix(strings.TrimPrefix(l, `"`), "'")
	return strings.HasPrefix(l, key)
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
