// Package wellknown reads skills from an agent-skills discovery index
// (the Cloudflare RFC that `npx skills` implements): GET
// /.well-known/agent-skills/index.json (v0.2.0: each skill a SKILL.md or an
// archive, with a sha256 digest), or the v0.1 /.well-known/skills/index.json
// that lists each skill's files. Every artifact is checked against its
// digest and unpacked in memory under the store's size limits; what is
// installed is pinned by that digest.
package wellknown

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
)

// SchemaV2 is the $schema of a v0.2.0 index; an index without $schema is
// v0.1, any other $schema is refused.
const SchemaV2 = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"

// The two index locations, newest first, as `npx skills` tries them.
const (
	PathV2    = ".well-known/agent-skills"
	PathV1    = ".well-known/skills"
	IndexFile = "index.json"
)

// Types of a v0.2 entry, and TypeFiles for a v0.1 entry.
const (
	TypeSkillMD = "skill-md"
	TypeArchive = "archive"
	TypeFiles   = "files"
)

// ErrBadIndex is an index that is not JSON, not of a known version, or
// whose entries do not follow it.
var ErrBadIndex = errors.New("bad well-known index")

// Skill is one entry of an index.
type Skill struct {
	Name        string
	Description string
	Type        string // TypeSkillMD, TypeArchive or TypeFiles
	// URL is the artifact (v0.2), resolved against the index URL; for a
	// v0.1 entry, the skill's folder (its Files are relative to it).
	URL    string
	Digest string   // sha256:<64 lower-case hex> (v0.2); "" for v0.1
	Files  []string // v0.1: the files, SKILL.md among them
}

// Index is a parsed index.
type Index struct {
	Version string // "0.2.0" or "0.1.0"
	Skills  []Skill
}

var (
	nameRE   = lazyregexp.New(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	digestRE = lazyregexp.New(`^sha256:[a-f0-9]{64}$`)
)

// maxIndexBytes bounds the index document itself.
const maxIndexBytes = 4 << 20

// Parse reads the index served at indexURL. As `npx skills` does, a v0.2
// entry that does not follow the schema is skipped (skipped counts them)
// and a v0.1 index with one such entry is refused whole; an index with
// no usable skill is an error. Two entries of one name are refused.
func Parse(data []byte, indexURL string) (idx *Index, skipped int, err error) {
	base, err := url.Parse(indexURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, 0, fmt.Errorf("%w: the index URL %q is not absolute", ErrBadIndex, indexURL)
	}
	if len(data) > maxIndexBytes {
		return nil, 0, fmt.Errorf("%w: %d bytes, over %d", ErrBadIndex, len(data), maxIndexBytes)
	}
	var raw struct {
		Schema *string           `json:"$schema"`
		Skills []json.RawMessage `json:"skills"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrBadIndex, err)
	}
	if raw.Skills == nil {
		return nil, 0, fmt.Errorf(`%w: no "skills" list`, ErrBadIndex)
	}
	idx = &Index{}
	switch {
	case raw.Schema == nil:
		idx.Version = "0.1.0"
		for i, r := range raw.Skills {
			s, err := parseV1(r, base)
			if err != nil {
				return nil, 0, fmt.Errorf("%w: skill %d: %v", ErrBadIndex, i, err)
			}
			idx.Skills = append(idx.Skills, s)
		}
	case *raw.Schema == SchemaV2:
		idx.Version = "0.2.0"
		for _, r := range raw.Skills {
			s, err := parseV2(r, base)
			if err != nil {
				skipped++
				continue
			}
			idx.Skills = append(idx.Skills, s)
		}
	default:
		return nil, 0, fmt.Errorf("%w: unknown $schema %q (this agent reads %s and v0.1 without $schema)", ErrBadIndex, *raw.Schema, SchemaV2)
	}
	if len(idx.Skills) == 0 {
		return nil, skipped, fmt.Errorf("%w: no skill in it follows the schema", ErrBadIndex)
	}
	seen := map[string]bool{}
	for _, s := range idx.Skills {
		if seen[s.Name] {
			return nil, skipped, fmt.Errorf("%w: the skill %q is listed twice", ErrBadIndex, s.Name)
		}
		seen[s.Name] = true
	}
	return idx, skipped, nil
}

func checkName(n string) error {
	if len(n) < 1 || len(n) > 64 || !nameRE.MatchString(n) {
		return fmt.Errorf("name %q is not 1 to 64 of a-z, 0-9 and single inner hyphens", n)
	}
	return nil
}

func checkDescription(d string) error {
	if d == "" || len(d) > 1024 {
		return fmt.Errorf("the description is empty or over 1024 bytes")
	}
	return nil
}

func parseV2(r json.RawMessage, base *url.URL) (Skill, error) {
	var e struct {
		Name        string `json:"name"`
		Type        string `json:"type"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Digest      string `json:"digest"`
	}
	if err := json.Unmarshal(r, &e); err != nil {
		return Skill{}, err
	}
	if err := checkName(e.Name); err != nil {
		return Skill{}, err
	}
	if err := checkDescription(e.Description); err != nil {
		return Skill{}, err
	}
	if e.Type != TypeSkillMD && e.Type != TypeArchive {
		return Skill{}, fmt.Errorf("type %q is neither %s nor %s", e.Type, TypeSkillMD, TypeArchive)
	}
	if !digestRE.MatchString(e.Digest) {
		return Skill{}, fmt.Errorf("digest %q is not sha256: and 64 lower-case hex digits", e.Digest)
	}
	if e.URL == "" || strings.ContainsAny(e.URL, "\x00\r\n") {
		return Skill{}, fmt.Errorf("no url")
	}
	u, err := base.Parse(e.URL)
	if err != nil {
		return Skill{}, fmt.Errorf("url %q: %v", e.URL, err)
	}
	return Skill{Name: e.Name, Description: e.Description, Type: e.Type, URL: u.String(), Digest: e.Digest}, nil
}

func parseV1(r json.RawMessage, base *url.URL) (Skill, error) {
	var e struct {
		Name        string   `json:"name"`
		Description string   `json:"description"`
		Files       []string `json:"files"`
	}
	if err := json.Unmarshal(r, &e); err != nil {
		return Skill{}, err
	}
	if err := checkName(e.Name); err != nil {
		return Skill{}, err
	}
	if err := checkDescription(e.Description); err != nil {
		return Skill{}, err
	}
	if len(e.Files) == 0 || len(e.Files) > maxFiles {
		return Skill{}, fmt.Errorf("files lists %d files (1 to %d)", len(e.Files), maxFiles)
	}
	hasSkill := false
	for _, f := range e.Files {
		if err := checkPath(f); err != nil {
			return Skill{}, err
		}
		hasSkill = hasSkill || f == "SKILL.md" || f == "skill.md"
	}
	if !hasSkill {
		return Skill{}, fmt.Errorf("files does not list SKILL.md")
	}
	// The skill's folder sits beside the index: .../skills/<name>/.
	u, err := base.Parse(e.Name + "/")
	if err != nil {
		return Skill{}, err
	}
	return Skill{Name: e.Name, Description: e.Description, Type: TypeFiles, URL: u.String(), Files: e.Files}, nil
}

// checkPath refuses a file path that is not a plain relative path inside
// the skill folder: absolute, with .. or ., a backslash, a drive letter
// or NUL.
func checkPath(p string) error {
	if !fs.ValidPath(p) || p == "." || strings.ContainsAny(p, `\:`) {
		return fmt.Errorf("%w: the path %q is not inside the skill folder", ErrUnsafePath, p)
	}
	return nil
}

// ValidName reports whether n is a skill name an index may list.
func ValidName(n string) bool { return checkName(n) == nil }
