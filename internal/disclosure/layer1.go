package disclosure

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Skill is what Layer 1 needs to know about one active skill.
type Skill struct {
	Name        string
	Description string
	// DisableModelInvocation (disable-model-invocation: true) keeps the
	// skill out of Layer 1: only a person may invoke it.
	DisableModelInvocation bool
}

// Tool is a generic tool listed in Layer 1.
type Tool struct {
	Name        string
	Description string
}

// DefaultBudget is the Layer 1 budget in characters when no context window
// is known (SPEC §10).
const DefaultBudget = 16000

// CharsPerToken converts a context window in tokens into characters for the
// budget. Four characters per token is the usual figure for English text
// with cl100k/o200k; it makes the 2% of a 200k-token window equal the
// 16,000-character default.
const CharsPerToken = 4

// BudgetFor returns the Layer 1 budget in characters for a context window of
// the given number of tokens: 2% of it, times CharsPerToken. A window of 0
// or less gives DefaultBudget.
func BudgetFor(contextWindow int) int {
	if contextWindow <= 0 {
		return DefaultBudget
	}
	return contextWindow * 2 / 100 * CharsPerToken
}

const layer1Intro = "Skills add instructions and tools for specific tasks. When a task matches a skill below, call use_skill with its name first and follow what it returns.\n"

// Layer1 lays out the text a model always has in context: the tools, then
// one line per skill. Skills keep their order. Skills with
// DisableModelInvocation are left out and reported in neither list. budget
// is in characters (runes); a skill whose line would take the text past it
// is dropped and later, shorter ones may still fit. The tools are always
// kept, even past the budget, since without them no skill can be used.
func Layer1(skills []Skill, tools []Tool, budget int) (text string, included, dropped []string) {
	var b strings.Builder
	// Grown once: to the whole text, or to the budget when that is less.
	want := len(layer1Intro) + 64
	for _, t := range tools {
		want += len(t.Name) + len(t.Description) + 5
	}
	for _, s := range skills {
		want += len(s.Name) + len(s.Description) + 5
	}
	b.Grow(min(want, budget+1<<10))
	if len(tools) > 0 {
		b.WriteString("## Tools\n")
		for _, t := range tools {
			b.WriteString(line(t.Name, t.Description))
		}
	}
	size := utf8.RuneCountInString(b.String())
	header := "\n## Skills\n" + layer1Intro
	headerSize := utf8.RuneCountInString(header)
	for _, s := range skills {
		if s.DisableModelInvocation {
			continue
		}
		// Sized before it is built (line's "- name: desc\n"), and only
		// as far as the room left: with many skills, most are dropped,
		// and each of those is then read only that far.
		room := budget - size - len("- : \n") - utf8.RuneCountInString(s.Name)
		if len(included) == 0 {
			room -= headerSize
		}
		desc, n, fits := s.Description, 0, true
		if len(desc) <= room { // a byte is at least a rune
			desc = collapseSpace(desc)
			n = utf8.RuneCountInString(desc)
		} else if n, fits = collapsedRunes(desc, room); fits {
			desc = collapseSpace(desc)
		}
		if !fits {
			dropped = append(dropped, s.Name)
			continue
		}
		size = budget - room + n
		if len(included) == 0 {
			b.WriteString(header)
		}
		b.WriteString("- ")
		b.WriteString(s.Name)
		b.WriteString(": ")
		b.WriteString(desc)
		b.WriteByte('\n')
		included = append(included, s.Name)
	}
	return b.String(), included, dropped
}

// line is "- name: description" on one line; descriptions written as YAML
// block scalars lose their line breaks here.
func line(name, desc string) string {
	return "- " + name + ": " + collapseSpace(desc) + "\n"
}

// collapseSpace is strings.Join(strings.Fields(s), " "), without copying s
// when it already is so, as almost every description is.
func collapseSpace(s string) string {
	space := true // at the start, as after a space: a leading space must go
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			// A space outside ASCII is never kept as it is.
			r, n := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				return strings.Join(strings.Fields(s), " ")
			}
			i += n
			space = false
			continue
		}
		i++
		switch {
		case asciiSpace[c] == 0:
			space = false
		case space || c != ' ':
			return strings.Join(strings.Fields(s), " ")
		default:
			space = true
		}
	}
	if space && s != "" {
		return strings.Join(strings.Fields(s), " ")
	}
	return s
}

// collapsedRunes is utf8.RuneCountInString(collapseSpace(s)) while that
// is at most limit; past it, it stops reading and reports false.
func collapsedRunes(s string, limit int) (n int, fits bool) {
	if limit < 0 {
		return 0, false
	}
	gap := false // white space after a word: one space, if a word follows
	for i := 0; i < len(s); {
		var space bool
		if c := s[i]; c < utf8.RuneSelf {
			space = asciiSpace[c] == 1
			i++
		} else {
			r, w := utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
			i += w
		}
		switch {
		case space:
			gap = n > 0
			continue
		case gap:
			n, gap = n+2, false
		default:
			n++
		}
		if n > limit {
			return n, false
		}
	}
	return n, true
}

// asciiSpace marks the ASCII bytes unicode.IsSpace reports, as strings
// does: a byte loop over 1,000 descriptions costs a fraction of a rune loop.
var asciiSpace = [utf8.RuneSelf]uint8{'\t': 1, '\n': 1, '\v': 1, '\f': 1, '\r': 1, ' ': 1}
