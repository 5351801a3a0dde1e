package registry

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/agentskills/agent/registry/manifest"
)

// Listing is what listings (`agent tools`, `prompt`, `skill list`, `check`,
// MCP) need of a skill's SKILL.md and folder, recorded at install so that
// they parse no SKILL.md and walk no folder (SPEC §5, "The registry is the
// index"). It is trusted only while Fingerprint matches the installed
// SKILL.md; otherwise the reader parses the file, which also refuses one
// changed after install.
type Listing struct {
	// Fingerprint is "size:mtime_ns:inode" of the installed SKILL.md.
	Fingerprint string

	// Manifest is SKILL.md as listings see it, and what Indexed returns,
	// so that a listing of 1,000 skills builds no manifest of its own.
	// It holds the fields listingJSON names; Name, Description and
	// Version are the entry's, and Metadata holds agent.requires alone.
	// Nothing may change it: every reader of the entry shares it.
	Manifest manifest.Manifest

	// Runnable is the script files found at install (file names under
	// scripts/), so that no listing reads the scripts folder.
	Runnable []string
	// Requires is metadata's agent.requires as written (SPEC §21), so that
	// activation and check find dependencies without reading SKILL.md.
	Requires string
	// Warnings are the SKILL.md warnings found at install.
	Warnings []manifest.Problem
}

// listingJSON is a Listing as registry.json holds it.
type listingJSON struct {
	Fingerprint string `json:"fingerprint"`

	MinAgentVersion string                 `json:"min_agent_version,omitempty"`
	MaxAgentVersion string                 `json:"max_agent_version,omitempty"`
	AgentVersion    string                 `json:"agent_version,omitempty"`
	Plugin          *manifest.PluginSpec   `json:"plugin,omitempty"`
	Scripts         []string               `json:"scripts,omitempty"`
	ScriptsIgnore   []string               `json:"scripts_ignore,omitempty"`
	Runnable        []string               `json:"runnable,omitempty"`
	Env             []string               `json:"env,omitempty"`
	FS              manifest.FSPermissions `json:"fs,omitzero"`
	Network         []string               `json:"network,omitempty"`

	AllowedTools           []string `json:"allowed-tools,omitempty"`
	ArgumentHint           string   `json:"argument-hint,omitempty"`
	DisableModelInvocation bool     `json:"disable-model-invocation,omitempty"`
	UserInvocable          *bool    `json:"user-invocable,omitempty"`
	Context                string   `json:"context,omitempty"`
	Agent                  string   `json:"agent,omitempty"`
	Model                  string   `json:"model,omitempty"`

	Requires string             `json:"requires,omitempty"`
	Warnings []manifest.Problem `json:"warnings,omitempty"`
}

// MarshalJSON writes l as registry.json holds it.
func (l Listing) MarshalJSON() ([]byte, error) {
	m := &l.Manifest
	return json.Marshal(&listingJSON{
		Fingerprint:     l.Fingerprint,
		MinAgentVersion: m.MinAgentVersion, MaxAgentVersion: m.MaxAgentVersion, AgentVersion: m.AgentVersion,
		Plugin: m.Plugin, Scripts: m.Scripts, ScriptsIgnore: m.ScriptsIgnore, Runnable: l.Runnable,
		Env: m.Permissions.Env, FS: m.Permissions.FS, Network: m.Permissions.Network,
		AllowedTools: m.AllowedTools, ArgumentHint: m.ArgumentHint, DisableModelInvocation: m.DisableModelInvocation,
		UserInvocable: m.UserInvocable, Context: m.Context, Agent: m.Agent, Model: m.Model,
		Requires: l.Requires, Warnings: l.Warnings,
	})
}

// UnmarshalJSON reads l as registry.json holds it. The manifest's name,
// description and version are the entry's, which Entry.indexed adds.
func (l *Listing) UnmarshalJSON(data []byte) error {
	var w listingJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*l = Listing{
		Fingerprint: w.Fingerprint,
		Manifest: manifest.Manifest{
			MinAgentVersion: w.MinAgentVersion, MaxAgentVersion: w.MaxAgentVersion, AgentVersion: w.AgentVersion,
			Plugin: w.Plugin, Scripts: w.Scripts, ScriptsIgnore: w.ScriptsIgnore,
			Permissions:  manifest.Permissions{Env: w.Env, FS: w.FS, Network: w.Network},
			AllowedTools: w.AllowedTools, ArgumentHint: w.ArgumentHint, DisableModelInvocation: w.DisableModelInvocation,
			UserInvocable: w.UserInvocable, Context: w.Context, Agent: w.Agent, Model: w.Model,
		},
		Runnable: w.Runnable, Requires: w.Requires, Warnings: w.Warnings,
	}
	l.Manifest.Metadata = requiresMetadata(w.Requires)
	return nil
}

// requiresMetadata is a listed manifest's Metadata: agent.requires alone.
func requiresMetadata(requires string) map[string]any {
	if requires == "" {
		return nil
	}
	return map[string]any{"agent.requires": requires}
}

// NewListing records m, the runnable scripts and the fingerprint of dir's
// SKILL.md. runnable is nil when the caller did not list the scripts; then
// there is no listing (nil), and readers parse SKILL.md as before.
func NewListing(dir string, m *manifest.Manifest, warnings []manifest.Problem, runnable []string) (*Listing, error) {
	if m == nil || runnable == nil {
		return nil, nil
	}
	fp, err := ManifestFingerprint(dir)
	if err != nil {
		return nil, err
	}
	l := ListingOf(m, warnings, runnable)
	l.Fingerprint = fp
	return l, nil
}

// ListingOf is the listing of m without a fingerprint: what a skill that
// has no folder (a bundled one) lists.
func ListingOf(m *manifest.Manifest, warnings []manifest.Problem, runnable []string) *Listing {
	l := &Listing{
		Manifest: manifest.Manifest{
			Name: m.Name, Description: m.Description, Version: m.Version,
			MinAgentVersion: m.MinAgentVersion, MaxAgentVersion: m.MaxAgentVersion, AgentVersion: m.AgentVersion,
			Plugin: m.Plugin, Scripts: m.Scripts, ScriptsIgnore: m.ScriptsIgnore, Permissions: m.Permissions,
			AllowedTools: m.AllowedTools, ArgumentHint: m.ArgumentHint, DisableModelInvocation: m.DisableModelInvocation,
			UserInvocable: m.UserInvocable, Context: m.Context, Agent: m.Agent, Model: m.Model,
		},
		Runnable: runnable,
		Warnings: warnings,
	}
	l.Requires, _ = m.Metadata["agent.requires"].(string)
	l.Manifest.Metadata = requiresMetadata(l.Requires)
	return l
}

// manifestStat lstats a folder's manifest as manifest.FindName finds it:
// SKILL.md, and skill.md only when there is no SKILL.md (one more lstat,
// for those skills alone). stat lstats a name in the folder. Whatever is
// not a regular file fails the fingerprint, and the caller parses the
// manifest through manifest.FindFile, which says what is wrong.
func manifestStat(stat func(name string) (fileStat, error)) (fileStat, error) {
	var st fileStat
	var err error
	manifest.FindName(func(name string) bool {
		st, err = stat(name)
		return err == nil
	})
	return st, err
}

// ManifestFingerprint is "size:mtime_ns:inode" of dir's SKILL.md (or
// skill.md), from one lstat: no file is opened.
func ManifestFingerprint(dir string) (string, error) {
	p := filepath.Join(dir, manifest.ManifestFile)
	st, err := manifestStat(func(name string) (fileStat, error) {
		p = filepath.Join(dir, name)
		return lstatPath(p)
	})
	if err != nil {
		return "", err
	}
	var buf [64]byte
	fp, ok := appendFingerprint(buf[:0], &st)
	if !ok {
		return "", fmt.Errorf("%s: not a regular file", p)
	}
	return string(fp), nil
}

// appendFingerprint appends the fingerprint of st to b; false when st is not a
// regular file.
func appendFingerprint(b []byte, st *fileStat) ([]byte, bool) {
	if !st.regular {
		return b, false
	}
	b = strconv.AppendInt(b, st.size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.mtime, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, st.ino, 10)
	return b, true
}

// Indexed returns the manifest as the entry recorded it, without parsing
// SKILL.md, when the entry has a listing and SKILL.md still has the
// recorded fingerprint. The manifest has no Body and no metadata but
// agent.requires: Layer 2 and info read the file. It is shared: callers
// must not change it. To check many entries, use Store.Listings.
func (e *Entry) Indexed() (*manifest.Manifest, bool) {
	if e.Listing == nil {
		return nil, false
	}
	if e.Path == "" {
		// A bundled skill has no folder: its listing comes from the
		// binary itself, and there is nothing to check it against.
		if e.Source != SourceBundled {
			return nil, false
		}
		return &e.Listing.Manifest, true
	}
	st, err := manifestStat(func(name string) (fileStat, error) { return lstatPath(filepath.Join(e.Path, name)) })
	if err != nil {
		return nil, false
	}
	return e.indexed(&st)
}

func (e *Entry) indexed(st *fileStat) (*manifest.Manifest, bool) {
	var buf [64]byte
	fp, ok := appendFingerprint(buf[:0], st)
	l := e.Listing
	if !ok || string(fp) != l.Fingerprint {
		return nil, false
	}
	m := &l.Manifest
	if m.Name != e.Name || m.Description != e.Description || m.Version != e.Version {
		// A listing read from registry.json, or an entry renamed since.
		c := *m
		c.Name, c.Description, c.Version = e.Name, e.Description, e.Version
		m = &c
	}
	return m, true
}

// Listings checks many entries' listings through one handle on skills/:
// each check is one fstatat of <canonical>/SKILL.md relative to it, so the
// kernel does not walk the whole path again for each of 1,000 skills (that
// walk was most of a listing's system time). Close it when done.
type Listings struct {
	dir string
	fd  int // -1 when skills/ could not be opened: every check uses the path
}

// Listings opens the handle; it never fails (without one, Indexed stats
// the full path).
func (s *Store) Listings() *Listings {
	dir := s.SkillsDir()
	return &Listings{dir: dir, fd: openDir(dir)}
}

// Indexed is e.Indexed.
func (l *Listings) Indexed(e *Entry) (*manifest.Manifest, bool) {
	st, ok, direct := l.check(e)
	return indexedBy(e, &st, ok, direct)
}

// indexedBy is Indexed from what check found.
func indexedBy(e *Entry, st *fileStat, ok, direct bool) (*manifest.Manifest, bool) {
	switch {
	case !direct:
		return e.Indexed()
	case !ok:
		return nil, false
	}
	return e.indexed(st)
}

// check lstats e's manifest through the handle; direct is false where it
// cannot (e is not in skills/, or there is no handle), and then only
// e.Indexed can say.
func (l *Listings) check(e *Entry) (st fileStat, ok, direct bool) {
	if e.Listing == nil {
		return fileStat{}, false, true
	}
	// Installed skills live in skills/<canonical> (Store.checkPaths);
	// linked ones elsewhere, and bundled ones nowhere.
	if l.fd < 0 || len(e.Path) <= len(l.dir)+1 || e.Path[:len(l.dir)] != l.dir || e.Path[len(l.dir)] != filepath.Separator ||
		strings.IndexByte(e.Path[len(l.dir)+1:], filepath.Separator) >= 0 {
		return fileStat{}, false, false
	}
	var buf [256]byte
	st, err := manifestStat(func(name string) (fileStat, error) {
		rel := append(append(append(buf[:0], e.Path[len(l.dir)+1:]...), filepath.Separator), name...)
		if st, ok := lstatAt(l.fd, string(rel)); ok {
			return st, nil
		}
		return fileStat{}, fs.ErrNotExist
	})
	return st, err == nil, true
}

// IndexedAll is Indexed for each entry of all that want picks (every one
// when want is nil); out[i] is nil where Indexed would say false or want
// did not pick all[i]. The checks, one fstatat each, are most of a listing
// of 1,000 skills, so they run on up to GOMAXPROCS threads. They allocate
// nothing as a rule (Indexed returns the listing's own manifest): a page
// fault while several threads of the process run costs a TLB shootdown
// on every CPU they run on.
func (l *Listings) IndexedAll(all []Entry, want func(i int) bool) []*manifest.Manifest {
	out := make([]*manifest.Manifest, len(all))
	check := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if want == nil || want(i) {
				st, ok, direct := l.check(&all[i])
				out[i], _ = indexedBy(&all[i], &st, ok, direct)
			}
		}
	}
	if workers := min(runtime.GOMAXPROCS(0), len(all)/minPerWorker); workers < 2 {
		check(0, len(all))
	} else {
		var wg sync.WaitGroup
		step := (len(all) + workers - 1) / workers
		for lo := step; lo < len(all); lo += step {
			wg.Go(func() { check(lo, min(lo+step, len(all))) })
		}
		check(0, min(step, len(all)))
		wg.Wait()
	}
	return out
}

// minPerWorker is the fewest checks worth another thread: waking one costs
// about as much as a hundred fstatat calls.
const minPerWorker = 128

// Close releases the handle.
func (l *Listings) Close() error {
	if l.fd < 0 {
		return nil
	}
	fd := l.fd
	l.fd = -1
	return closeDir(fd)
}
