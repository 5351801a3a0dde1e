package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/flock"
	"github.com/agentskills/agent/internal/ground/tooldesc"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/signing"
)

// Plugin is a skill's plugin executable and the sha256 it must have.
type Plugin struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Tool is a tool a skill's plugin described at install, cached so that
// listing tools needs no process.
type Tool = tooldesc.Tool

// Entry is one installed skill in registry.json (SPEC §5). What it is
// and how it is used are its own fields; where it came from, what its
// files must hash to, what it replaced and how a linked skill is rebuilt
// are grouped. The groups are embedded, so e.URL still reads, and
// registry.json keeps its flat form and key order (entryJSON).
type Entry struct {
	Name        string  `json:"name"`
	Canonical   string  `json:"canonical"`
	Trusted     bool    `json:"trusted"`
	Path        string  `json:"path"`
	Description string  `json:"description,omitempty"`
	Plugin      *Plugin `json:"plugin,omitempty"`
	Tools       []Tool  `json:"tools,omitempty"`
	// NamedOnly skills are active only when AGENT_SKILLS names them: all
	// and all-untrusted leave them out (the bundled base skill, whose
	// shell is a choice made by name).
	NamedOnly bool `json:"named_only,omitempty"`
	// Listing is what listings need of SKILL.md (listing.go).
	Listing *Listing `json:"listing,omitempty"`
	// Placements are the copies of this skill in other agents' skill
	// folders (SPEC §19).
	Placements []Placement `json:"placements,omitempty"`

	Origin
	Integrity
	History
	Dev
}

// Origin is where an entry's files came from.
type Origin struct {
	Source     string `json:"source"`            // "git", "oci", "bundled" or "dev" (linked)
	URL        string `json:"git_url,omitempty"` // the source URL, of any kind (git, oci://)
	Ref        string `json:"ref,omitempty"`
	Constraint string `json:"constraint,omitempty"`
	Version    string `json:"version,omitempty"`
	CommitSHA  string `json:"commit_sha,omitempty"`
	Subdir     string `json:"subdir,omitempty"` // the skill folder inside the repository
	// Signer is the accepted key that signed the installed commit or
	// artifact (fingerprint and comment), when the signer policy checked
	// it (SPEC §18); "" when nothing was verified.
	Signer string `json:"signer,omitempty"`
}

// Integrity is what an installed skill's files must hash to.
type Integrity struct {
	// ManifestSHA256 is the sha256 of the installed SKILL.md; LoadInstalled
	// refuses a SKILL.md edited after install. Empty for entries written
	// before it was recorded, and for bundled skills.
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	// DirHash is the h1: hash (golang.org/x/mod/sumdb/dirhash) of the
	// installed folder, recorded at add, update and trust; CheckIntegrity
	// refuses the skill at first use when its files no longer match.
	// Empty for bundled and linked skills and entries written before it
	// was recorded.
	DirHash string `json:"dir_hash,omitempty"`
	// TrustedHashes are the h1: hashes of this folder that this home
	// trusted the skill at before it moved on (update, sync, rollback),
	// oldest first; the trusted DirHash counts too. Sync keeps trust only
	// at one of them, so a lock edited to name other code does not
	// inherit it. Untrust clears them.
	TrustedHashes []string `json:"trusted_hashes,omitempty"`
}

// History is when an entry was installed and changed, and the commit that
// rollback returns to.
type History struct {
	InstalledAt time.Time `json:"installed_at,omitzero"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`
	PreviousSHA string    `json:"previous_sha,omitempty"`
	// PreviousDirHash is the h1: hash of PreviousSHA's folder, checked
	// again by rollback.
	PreviousDirHash string `json:"previous_dir_hash,omitempty"`
}

// Dev is what a linked (dev) skill needs to be rebuilt.
type Dev struct {
	// Stamp fingerprints a linked skill's folder at its last build; a
	// different stamp means its sources changed and it is relinked.
	Stamp string `json:"stamp,omitempty"`
}

// Source values of Entry.
const (
	SourceGit     = "git"
	SourceBundled = "bundled"
)

const registryVersion = 1

type registryFile struct {
	Version int     `json:"version"`
	Skills  []Entry `json:"skills"`
}

// Store is the set of installed skills under one AGENT_HOME.
type Store struct {
	Home string           // AGENT_HOME
	Git  gitsrc.Git       // nil means &GoGit{}
	Now  func() time.Time // nil means time.Now
	// OCI pulls oci:// sources and mirrors; nil is a client that reads
	// the Docker configuration's credentials.
	OCI *ocisrc.Client
	// Mirrors serve pinned fetches of the git sources they cover (§18).
	Mirrors []Mirror
	// Signatures is the signer policy every fetch is checked against
	// (§18); nil checks nothing.
	Signatures *signing.Policy
	// Limits bound the bytes of one file and of one skill that add,
	// update, sync and publish write (max_file_size, max_skill_size).
	Limits gitsrc.Limits
	// Reserved reports the canonical names no installed or linked skill
	// may take: the bundled skills' (SPEC §5). add, link and sync refuse
	// them with ErrReservedName. nil reserves none.
	Reserved func(canonical string) bool

	// hook, when set, is called at named points of a commit; tests use it
	// to simulate a kill at that point.
	hook func(point string)
	// exchange swaps two directories atomically; nil means the
	// renameat2 one. Tests replace it to exercise the two-rename fallback.
	exchange func(a, b string) error

	// idx is the binary index and the lines last read (index.go).
	idx index
}

// checkName refuses a canonical name that Reserved holds.
func (s *Pipeline) checkName(canonical string) error {
	if s.Reserved != nil && s.Reserved(canonical) {
		return fmt.Errorf("%s %w", canonical, ErrReservedName)
	}
	return nil
}

// swapWith swaps a and b through ex, the store's exchange hook, or the
// renameat2 one when it is nil.
func swapWith(ex func(a, b string) error, a, b string) error {
	if ex != nil {
		return ex(a, b)
	}
	return exchange(a, b)
}

// NewStore returns the store under home (AGENT_HOME).
func NewStore(home string) *Store { return &Store{Home: home} }

// SkillsDir is $AGENT_HOME/skills.
func (s *Store) SkillsDir() string { return filepath.Join(s.Home, "skills") }

// RegistryPath is $AGENT_HOME/skills/registry.json.
func (s *Store) RegistryPath() string { return filepath.Join(s.SkillsDir(), "registry.json") }

// PluginsDir is $AGENT_HOME/plugins, where built plugin binaries live.
func (s *Store) PluginsDir() string { return filepath.Join(s.Home, "plugins") }

func (s *Store) tmpDir() string { return filepath.Join(s.SkillsDir(), ".tmp") }

func (s *Store) skillDir(canonical string) string { return filepath.Join(s.SkillsDir(), canonical) }

func (s *Pipeline) git() gitsrc.Git {
	return newSources(s.Git, s.OCI, s.Mirrors, s.Signatures)
}

func (s *Store) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *Store) at(point string) {
	if s.hook != nil {
		s.hook(point)
	}
}

// List returns the installed skills sorted by canonical name. A missing
// registry is an empty list; a corrupt one is ErrCorrupt. When a killed
// writer left work behind, List finishes or undoes it first (see
// recoverIfNeeded), so that the folders match the entries it returns.
func (s *Store) List() ([]Entry, error) {
	recovery{s}.ifNeeded()
	return s.read()
}

// Get returns the skill named name, in any spelling.
func (s *Store) Get(name string) (Entry, error) {
	recovery{s}.ifNeeded()
	entries, err := s.read()
	if err != nil {
		return Entry{}, err
	}
	return find(entries, name)
}

func find(entries []Entry, name string) (Entry, error) {
	c, err := manifest.Canonical(name)
	if err != nil {
		return Entry{}, err
	}
	for _, e := range entries {
		if e.Canonical == c {
			return e, nil
		}
	}
	return Entry{}, notFound(entries, name)
}

func notFound(entries []Entry, name string) error {
	if len(entries) == 0 {
		return fmt.Errorf("%w: %s; no skills are installed, add one with agent skill add <source>", ErrNotFound, name)
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Canonical
	}
	return fmt.Errorf("%w: %s; installed: %s (see agent skill list)", ErrNotFound, name, strings.Join(names, ", "))
}

// SetTrusted records whether the user trusts a skill.
func (s *Store) SetTrusted(name string, trusted bool) (Entry, error) {
	var out Entry
	err := s.Edit(func(entries []Entry) ([]Entry, error) {
		e, err := find(entries, name)
		if err != nil {
			return nil, err
		}
		e.Trusted = trusted
		if !trusted {
			e.TrustedHashes = nil
		}
		out = e
		return replace(entries, e), nil
	})
	if err != nil {
		return Entry{}, fmt.Errorf("set trust of %s: %w", name, err)
	}
	return out, nil
}

// Remove deletes a skill's files, its built plugin and its entry. A marker
// written first lets the next writer finish the job if this run is killed
// after the registry is written.
func (s *Store) Remove(ctx context.Context, name string) (Entry, error) {
	var out Entry
	var marker string
	err := s.lockedThen(func(entries []Entry) ([]Entry, error) {
		e, err := find(entries, name)
		if err != nil {
			return nil, err
		}
		out = e
		if err := os.MkdirAll(s.tmpDir(), 0o755); err != nil {
			return nil, err
		}
		marker = filepath.Join(s.tmpDir(), e.Canonical+".rm."+e.CommitSHA)
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return nil, err
		}
		s.at("remove:marked")
		rest := make([]Entry, 0, len(entries))
		for _, x := range entries {
			if x.Canonical != e.Canonical {
				rest = append(rest, x)
			}
		}
		return rest, nil
	}, func() {
		s.at("remove:committed")
		_ = os.RemoveAll(s.skillDir(out.Canonical))
		_ = os.RemoveAll(filepath.Join(s.PluginsDir(), out.Canonical))
		_ = os.Remove(integrityRecords(s.Home).path(out.Canonical))
		_ = os.Remove(marker)
	})
	if err != nil {
		return Entry{}, fmt.Errorf("remove %s: %w", name, err)
	}
	return out, nil
}

func replace(entries []Entry, e Entry) []Entry {
	out := make([]Entry, 0, len(entries)+1)
	done := false
	for _, x := range entries {
		if x.Canonical == e.Canonical {
			out = append(out, e)
			done = true
		} else {
			out = append(out, x)
		}
	}
	if !done {
		out = append(out, e)
	}
	return out
}

// Edit is the store's one transaction: it runs fn under the registry lock
// with the current entries (after recovering leftovers) and writes what it
// returns. A nil slice with a nil error means nothing changed; the other
// files of the home (registry/trust's) are written inside fn to share the
// lock.
func (s *Store) Edit(fn func([]Entry) ([]Entry, error)) error {
	return s.lockedThen(fn, nil)
}

// lockedThen is locked, plus after, which runs under the lock once the
// registry has been written (to drop markers that recovery would otherwise
// have to interpret).
func (s *Store) lockedThen(fn func([]Entry) ([]Entry, error), after func()) error {
	unlock, err := lockRegistry(s.SkillsDir())
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := s.read()
	if err != nil {
		return err
	}
	recovery{s}.run(entries)
	next, err := fn(entries)
	if err == nil && next != nil {
		err = s.write(next)
	}
	if err != nil {
		// Everything fn may do is a recoverable step; undo it against the
		// registry as it still is.
		recovery{s}.run(entries)
		return err
	}
	if after != nil && next != nil {
		after()
	}
	return nil
}

// lockRegistry takes the flock on skills/.lock that serialises writers across
// processes (and goroutines: each call opens its own file description).
func lockRegistry(skillsDir string) (func(), error) {
	if err := os.MkdirAll(skillsDir, 0o755); err != nil {
		return nil, fmt.Errorf("lock registry: %w", err)
	}
	lockPath := filepath.Join(skillsDir, ".lock")
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock registry: %w", err)
	}
	if err := flock.Lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock registry %s: %w", lockPath, err)
	}
	return func() {
		_ = flock.Unlock(f)
		f.Close()
	}, nil
}

// read loads registry.json. Writers replace it by rename, so a reader sees
// either the old or the new file, never half of one.
func (s *Store) read() ([]Entry, error) {
	st, serr := statStamp(s.RegistryPath())
	if serr == nil {
		if entries, ok := s.idx.unchanged(st); ok {
			return entries, nil
		}
		if entries, recs, head, ok := s.idx.read(s.SkillsDir(), st); ok {
			s.idx.remember(st, recs, head)
			return entries, nil
		}
	}
	data, err := os.ReadFile(s.RegistryPath())
	if errors.Is(err, os.ErrNotExist) {
		return []Entry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read registry: %w", err)
	}
	corrupt := func(why string) error {
		return fmt.Errorf("%w: %s: %s; %s", ErrCorrupt, s.RegistryPath(), why, corruptAdvice)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, corrupt("the file is empty")
	}
	if data = bytes.TrimSpace(data); data[0] != '{' {
		return nil, corrupt("it is not a JSON object")
	}
	// Pointers tell a missing or null field from an empty one: `null`, `{}`
	// and `{"version":1}` are damage, never an empty registry (reading them
	// as one would let the next write drop every entry and recovery delete
	// every built plugin).
	var rf struct {
		Version *int     `json:"version"`
		Skills  *[]Entry `json:"skills"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rf); err != nil {
		return nil, corrupt(err.Error())
	}
	if dec.More() {
		return nil, corrupt("unexpected data after the JSON object")
	}
	switch {
	case rf.Version == nil:
		return nil, corrupt(`it has no "version"`)
	case *rf.Version < 1:
		return nil, corrupt(fmt.Sprintf("format version %d is not one this agent wrote", *rf.Version))
	case *rf.Version > registryVersion:
		return nil, corrupt(fmt.Sprintf("format version %d was written by a newer agent; upgrade agent", *rf.Version))
	case rf.Skills == nil:
		return nil, corrupt(`it has no "skills" list`)
	}
	skills := *rf.Skills
	seen := map[string]bool{}
	for i, e := range skills {
		c, err := manifest.Canonical(e.Canonical)
		if err != nil || c != e.Canonical {
			return nil, corrupt(fmt.Sprintf("entry %d has an invalid canonical name %q", i, e.Canonical))
		}
		if seen[c] {
			return nil, corrupt(fmt.Sprintf("skill %q appears twice", c))
		}
		seen[c] = true
		if err := s.checkPaths(e); err != nil {
			return nil, corrupt(fmt.Sprintf("skill %q: %v", c, err))
		}
	}
	if skills == nil {
		skills = []Entry{}
	}
	sortEntries(skills)
	if serr == nil {
		s.idx.heal(s.SkillsDir(), st, skills)
	}
	return skills, nil
}

// corruptAdvice is what to do about a corrupt registry.json. Nothing is
// rewritten or deleted while it is corrupt.
const corruptAdvice = "nothing was changed (it is never replaced automatically). Restore it from a backup or fix it by hand; " +
	"or move it away to start an empty registry (the skill folders under skills/ then have no entries: remove them and add the skills again)"

// checkPaths refuses an entry that points outside AGENT_HOME: its folder
// must be skills/<canonical> and a built plugin must live in
// plugins/<canonical>/ or inside the skill. Every command trusts these
// paths (they are run, hashed and removed), so a hand-edited or foreign
// entry must not steer them elsewhere.
func (s *Store) checkPaths(e Entry) error {
	if e.Path == "" {
		return fmt.Errorf(`no "path"`)
	}
	if e.Source == SourceDev {
		// `agent skill link` uses the author's own folder in place; it is
		// never deleted (remove only unregisters it) and is not hashed.
		if !filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path {
			return fmt.Errorf("linked path %s is not a clean absolute path", e.Path)
		}
	} else if filepath.Clean(e.Path) != s.skillDir(e.Canonical) {
		return fmt.Errorf("path %s is outside %s (it must be %s; if you moved AGENT_HOME, fix the paths by hand)", e.Path, s.SkillsDir()+string(filepath.Separator), s.skillDir(e.Canonical))
	}
	if e.Plugin != nil && !within(filepath.Join(s.PluginsDir(), e.Canonical), e.Plugin.Path) && !within(e.Path, e.Plugin.Path) {
		return fmt.Errorf("plugin path %s is neither under %s nor inside the skill", e.Plugin.Path, filepath.Join(s.PluginsDir(), e.Canonical))
	}
	return nil
}

func sortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Canonical < es[j].Canonical })
}

// write replaces registry.json: temp file in the same directory, fsync,
// rename, fsync of the directory. Only called under the lock.
func (s *Store) write(entries []Entry) error {
	sortEntries(entries)
	recs, err := records(entries, s.idx.remembered(s.SkillsDir()))
	if err != nil {
		return fmt.Errorf("write registry: %w", err)
	}
	err = atomicfile.Write(s.RegistryPath(), registryJSON(recs), 0o644, atomicfile.SyncDir(),
		atomicfile.BeforeReplace(func() { s.at("registry:before-rename") }))
	if err != nil {
		return fmt.Errorf("write registry: %w", err)
	}
	s.idx.indexed(s.SkillsDir(), recs)
	return nil
}
