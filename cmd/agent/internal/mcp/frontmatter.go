package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
)

// errNoFrontmatter is a SKILL.md that does not open with a "---" line or
// never closes it: the skills extension needs frontmatter.
var errNoFrontmatter = errors.New("SKILL.md has no YAML frontmatter between two '---' lines")

// closeFence is the frontmatter's closing line, as the reference skills
// client finds it.
var closeFence = lazyregexp.New(`(?m)^---[\t ]*$`)

// frontmatterValues renders the frontmatter of a SKILL.md as the JSON
// object the skills extension carries (SEP-2640 "Frontmatter"): every
// field the author wrote, typed by the YAML 1.2 core schema, which is how
// the reference client reads the file to verify the entry. yaml.v3 parses
// the structure; the plain scalars are typed here, because yaml.v3 follows
// YAML 1.1 in places (2024-01-02 becomes a time.Time), and a value typed
// differently from the client's reading makes it refuse the skill.
func frontmatterValues(skillMD []byte) (map[string]any, error) {
	text := bytes.ReplaceAll(skillMD, []byte("\r\n"), []byte("\n"))
	text = bytes.TrimPrefix(text, []byte("\xef\xbb\xbf"))
	rest, ok := bytes.CutPrefix(text, []byte("---\n"))
	if !ok {
		return nil, errNoFrontmatter
	}
	loc := closeFence.Re().FindIndex(rest)
	if loc == nil {
		return nil, errNoFrontmatter
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(rest[:loc[0]], &doc); err != nil {
		return nil, fmt.Errorf("frontmatter: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("frontmatter: empty; it needs at least name and description")
	}
	v, err := coreValue(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("frontmatter: not a mapping of keys to values")
	}
	return m, nil
}

// maxFrontmatterDepth bounds nesting, as the reference client does.
const maxFrontmatterDepth = 32

func coreValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxFrontmatterDepth {
		return nil, fmt.Errorf("frontmatter line %d: nested deeper than %d levels", n.Line, maxFrontmatterDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return coreValue(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := coreValue(n.Content[i], depth+1)
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("frontmatter line %d: key %q is not a string; quote it", n.Content[i].Line, n.Content[i].Value)
			}
			if key == "__proto__" {
				return nil, fmt.Errorf("frontmatter line %d: the key __proto__ is refused by JavaScript clients; rename it", n.Content[i].Line)
			}
			if _, dup := m[key]; dup {
				return nil, fmt.Errorf("frontmatter line %d: key %q appears twice", n.Content[i].Line, key)
			}
			v, err := coreValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := coreValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!str" && n.Style&yaml.TaggedStyle != 0 {
			return n.Value, nil
		}
		v, err := corePlain(n.Value)
		if err != nil {
			return nil, fmt.Errorf("frontmatter line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("frontmatter line %d: unsupported YAML node", n.Line)
}

// The YAML 1.2 core schema's plain scalars (YAML 1.2.2 §10.3.2).
var (
	coreNull    = lazyregexp.New(`^(?:~|null|Null|NULL)$`)
	coreTrue    = lazyregexp.New(`^(?:true|True|TRUE)$`)
	coreFalse   = lazyregexp.New(`^(?:false|False|FALSE)$`)
	coreInt     = lazyregexp.New(`^[+-]?[0-9]+$`)
	coreOctal   = lazyregexp.New(`^0o[0-7]+$`)
	coreHex     = lazyregexp.New(`^0x[0-9A-Fa-f]+$`)
	coreFloat   = lazyregexp.New(`^[+-]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[Ee][+-]?[0-9]+)?$`)
	coreSpecial = lazyregexp.New(`^(?:[+-]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// corePlain types one plain scalar by the core schema; anything else, a
// date included, is a string.
func corePlain(s string) (any, error) {
	switch {
	case s == "" || coreNull.MatchString(s):
		return nil, nil
	case coreTrue.MatchString(s):
		return true, nil
	case coreFalse.MatchString(s):
		return false, nil
	case coreInt.MatchString(s):
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		return finite(s)
	case coreFloat.MatchString(s):
		return finite(s)
	case coreOctal.MatchString(s), coreHex.MatchString(s):
		base := 8
		if s[1] == 'x' {
			base = 16
		}
		if u, err := strconv.ParseUint(s[2:], base, 64); err == nil && u <= math.MaxInt64 {
			return int64(u), nil
		}
		return nil, fmt.Errorf("%q is too large a number for JSON; quote it", s)
	case coreSpecial.MatchString(s):
		return nil, fmt.Errorf("%q cannot be represented in JSON; quote it", s)
	}
	return s, nil
}

// finite parses a core-schema float; JSON has no infinities.
func finite(s string) (any, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, err
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("%q cannot be represented in JSON; quote it", s)
	}
	return f, nil
}
