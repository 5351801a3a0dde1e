package registry

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/registry/deps"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/ocisrc"
)

// LockFileName is the lock's default name, next to the project it serves.
const LockFileName = "skills.lock"

// lockVersion is the newest format version this agent writes and reads.
// Version 2 adds requirers; a lock that records none is written as
// version 1, byte for byte as before, so older agents keep reading it.
const (
	lockVersion     = 2
	lockVersionBase = 1
)

// Lock is a skills.lock file (SPEC §15): the installed set, pinned to
// commits and h1: hashes, so that every machine can install the same bytes.
// Its JSON is stable: entries sorted by name then source, fields in a fixed
// order, no timestamps, so that a no-op lock rewrites the same bytes.
type Lock struct {
	Version int         `json:"version"`
	Skills  []LockEntry `json:"skills"`
}

// LockEntry is one skill, keyed by its canonical name and source.
type LockEntry struct {
	Name       string `json:"name"`                 // canonical name
	Source     string `json:"source"`               // the repository URL
	Path       string `json:"path,omitempty"`       // the skill's folder in the repository; "" is the root
	Ref        string `json:"ref,omitempty"`        // the branch, tag or SHA asked for at add
	Constraint string `json:"constraint,omitempty"` // the version constraint asked for at add
	Version    string `json:"version,omitempty"`
	Commit     string `json:"commit"`           // full commit SHA
	Hash       string `json:"hash"`             // h1: hash of the skill folder at Commit
	Plugin     string `json:"plugin,omitempty"` // the plugin's build path (SKILL.md plugin.build)
	Trusted    bool   `json:"trusted"`          // a request: trust is the local user's decision
	// Placements are the agents' skill folders the skill is placed in
	// (SPEC §19); sync places it there again.
	Placements []LockPlacement `json:"placements,omitempty"`
	// Requirers are the locked skills whose agent.requires name this one
	// (SPEC §21), sorted; none when only the user asked for it.
	Requirers []string `json:"requirers,omitempty"`
}

// key identifies an entry: two entries of one name from different sources
// are a conflict, never one replacing the other.
func (e LockEntry) key() string { return e.Name + "\x00" + e.Source }

// NewLock builds the lock of the installed git skills. Bundled skills
// ship with the binary and are not locked. The plugin's build path is read
// from each skill's SKILL.md (checked against its recorded hash).
func NewLock(entries []Entry) (*Lock, error) {
	l := &Lock{Version: lockVersionBase, Skills: []LockEntry{}}
	edges, _ := Dependencies(entries)
	for _, e := range entries {
		if !e.fetched() {
			continue
		}
		if e.DirHash == "" {
			return nil, fmt.Errorf("lock %s: %w: no h1: hash recorded (installed by an older agent); run agent skill update %s or remove it and add it again", e.Canonical, ErrLockCorrupt, e.Canonical)
		}
		le := LockEntry{
			Name: e.Canonical, Source: e.URL, Path: e.Subdir, Ref: e.Ref, Constraint: e.Constraint,
			Version: e.Version, Commit: e.CommitSHA, Hash: e.DirHash, Trusted: e.Trusted,
			Placements: lockPlacements(e.Placements),
			Requirers:  deps.Requirers(edges, e.Canonical),
		}
		if len(le.Requirers) > 0 {
			l.Version = lockVersion
		}
		m, _, err := LoadInstalled(e)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", e.Canonical, err)
		}
		if m.Plugin != nil {
			le.Plugin = m.Plugin.Build
		}
		l.Skills = append(l.Skills, le)
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	return l, nil
}

// Marshal encodes the lock in its stable form: sorted entries, two-space
// indentation, a final newline.
func (l *Lock) Marshal() ([]byte, error) {
	out := Lock{Version: l.Version, Skills: append([]LockEntry{}, l.Skills...)}
	sortLock(out.Skills)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Find returns the entry for a canonical name.
func (l *Lock) Find(name string) (LockEntry, bool) {
	for _, e := range l.Skills {
		if e.Name == name {
			return e, true
		}
	}
	return LockEntry{}, false
}

func sortLock(es []LockEntry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Name != es[j].Name {
			return es[i].Name < es[j].Name
		}
		return es[i].Source < es[j].Source
	})
}

// ParseLock decodes and checks a lock file. Unknown fields, a newer
// format, a malformed SHA or hash, a path that leaves the repository and
// two entries of one name are errors (ErrLockCorrupt, or ErrLockConflict
// when one name comes from two sources).
func ParseLock(data []byte) (*Lock, error) {
	var raw struct {
		Version *int         `json:"version"`
		Skills  *[]LockEntry `json:"skills"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLockCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: unexpected data after the JSON object", ErrLockCorrupt)
	}
	switch {
	case raw.Version == nil:
		return nil, fmt.Errorf(`%w: it has no "version"`, ErrLockCorrupt)
	case *raw.Version > lockVersion:
		return nil, fmt.Errorf("%w: format version %d was written by a newer agent; upgrade agent", ErrLockCorrupt, *raw.Version)
	case *raw.Version < 1:
		return nil, fmt.Errorf("%w: format version %d is not one agent writes", ErrLockCorrupt, *raw.Version)
	case raw.Skills == nil:
		return nil, fmt.Errorf(`%w: it has no "skills" list`, ErrLockCorrupt)
	}
	l := &Lock{Version: *raw.Version, Skills: *raw.Skills}
	if err := l.check(); err != nil {
		return nil, err
	}
	sortLock(l.Skills)
	return l, nil
}

// ReadLock reads and parses the lock file at path.
func ReadLock(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read lock: %w (write one with agent skill lock, or name the lock FILE)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	l, err := ParseLock(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return l, nil
}

// WriteLock writes the lock to path atomically (temp file, fsync, rename),
// so a reader or a kill never leaves half a lock.
func WriteLock(path string, l *Lock) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o644, atomicfile.Sync()); err != nil {
		return fmt.Errorf("write lock: %w", err)
	}
	return nil
}

// check validates every entry and refuses duplicates: one name from two
// sources is ErrLockConflict naming both.
func (l *Lock) check() error {
	bySource := map[string]string{}
	for i, e := range l.Skills {
		if err := e.check(); err != nil {
			return fmt.Errorf("%w: skill %d (%q): %v", ErrLockCorrupt, i, e.Name, err)
		}
		if src, ok := bySource[e.Name]; ok {
			if src == e.Source {
				return fmt.Errorf("%w: skill %q from %s appears twice; keep one entry", ErrLockCorrupt, e.Name, e.Source)
			}
			a, b := src, e.Source
			if b < a {
				a, b = b, a
			}
			return fmt.Errorf("%w: skill %q comes from two sources, %s and %s; keep one (agent skill add --name gives one of them another name)", ErrLockConflict, e.Name, a, b)
		}
		bySource[e.Name] = e.Source
	}
	for i, e := range l.Skills {
		if len(e.Requirers) > 0 && l.Version < lockVersion {
			return fmt.Errorf("%w: skill %d (%q) has requirers, which format version %d does not know; the lock says version %d", ErrLockCorrupt, i, e.Name, lockVersion, l.Version)
		}
		for _, r := range e.Requirers {
			if _, ok := bySource[r]; !ok || r == e.Name {
				return fmt.Errorf("%w: skill %d (%q) lists requirer %q, which is not another skill in the lock", ErrLockCorrupt, i, e.Name, r)
			}
		}
	}
	return nil
}

func (e LockEntry) check() error {
	if c, err := manifest.Canonical(e.Name); err != nil || c != e.Name {
		return fmt.Errorf("name %q is not a canonical skill name", e.Name)
	}
	if e.Source == "" {
		return fmt.Errorf(`no "source"`)
	}
	if err := gitsrc.CheckCloneURL(e.Source); err != nil {
		return err
	}
	if e.Path != "" && (!fs.ValidPath(e.Path) || e.Path == ".") {
		return fmt.Errorf("path %q is not a folder inside the repository (slash-separated, no . or ..)", e.Path)
	}
	if e.Ref != "" && e.Constraint != "" {
		return fmt.Errorf("both a ref (%s) and a constraint (%s)", e.Ref, e.Constraint)
	}
	if ocisrc.IsOCI(e.Source) || gitsrc.IsWellKnownIndex(e.Source) {
		if d, ok := strings.CutPrefix(e.Commit, "sha256:"); !ok || len(d) != 64 || !gitsrc.IsHex(d) || strings.ToLower(d) != d {
			return fmt.Errorf("commit %q of an oci:// or well-known source is not a sha256: digest (sha256: and 64 lower-case hex digits)", e.Commit)
		}
	} else if len(e.Commit) != 40 || !gitsrc.IsHex(e.Commit) || strings.ToLower(e.Commit) != e.Commit {
		return fmt.Errorf("commit %q is not a full lower-case SHA-1", e.Commit)
	}
	if !validH1(e.Hash) {
		return fmt.Errorf("hash %q is not an h1: hash (h1: and 32 bytes of base64)", e.Hash)
	}
	for _, s := range []string{e.Ref, e.Constraint, e.Version, e.Plugin} {
		if strings.ContainsAny(s, "\x00\n\r") {
			return fmt.Errorf("a field holds a control character")
		}
	}
	for _, p := range e.Placements {
		if err := p.check(); err != nil {
			return err
		}
	}
	return nil
}

func validH1(h string) bool {
	b64, ok := strings.CutPrefix(h, "h1:")
	if !ok {
		return false
	}
	sum, err := base64.StdEncoding.Strict().DecodeString(b64)
	return err == nil && len(sum) == 32
}
