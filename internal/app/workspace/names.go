package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxToolName is the longest tool name handed to a model client. Clients
// such as Claude's API accept ^[a-zA-Z0-9_-]{1,64}$, so a name that would
// be longer is cut and made unique again with a hash.
const MaxToolName = 64

// QualifiedSeparator joins skill and tool in Exposed names. Canonical skill
// names never contain '_', so the first "__" always ends the skill.
const QualifiedSeparator = "__"

// Exposed is the name a model client calls this tool by: the bare name, or
// when another tool took it, skill__tool (dots are not allowed in tool names
// by every client, so skill.tool is for people only). Names past
// MaxToolName keep a prefix and end in a short hash of the full name.
func (t *ToolRef) Exposed() string {
	if !t.Shadowed {
		return clampName(t.Name)
	}
	return QualifiedName(t.Skill, t.Name)
}

// plainLine reports whether s is printable ASCII with no space at either
// end: FirstLine leaves such a line as it is, but for its length.
func plainLine(s string) bool {
	return s == "" || s[0] != ' ' && s[len(s)-1] != ' ' && PrintableASCII(s)
}

// PrintableASCII reports whether every byte of s is printable ASCII: text
// that needs no escaping for a terminal and lays out one column a byte.
func PrintableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// QualifiedName is skill__tool, cut to MaxToolName with a short hash.
func QualifiedName(skill, tool string) string {
	return clampName(skill + QualifiedSeparator + tool)
}

func clampName(name string) string {
	if len(name) <= MaxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:MaxToolName-len(suffix)] + suffix
}

// FirstLine cuts s at its first line break and to max runes (no limit
// when max is 0), marking a cut with "…": descriptions in tables and
// error text in one-line messages.
func FirstLine(s string, max int) string {
	if (max <= 0 || len(s) <= max) && plainLine(s) {
		return s // one pass for what almost every description is
	}
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // each invalid byte becomes U+FFFD
	}
	if max <= 0 {
		return s
	}
	// Most lines are short: they are returned as they are, not copied
	// (`agent tools` shows a line of each of thousands of tools).
	n, cut := 0, 0
	for i := range s {
		if n == max-1 {
			cut = i
		}
		if n == max {
			return s[:cut] + "…"
		}
		n++
	}
	return s
}
