package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/registry/gitsrc"
)

// Sync actions: what making one skill equal to the lock takes.
const (
	SyncAdd      = "add"      // in the lock, not installed
	SyncMove     = "move"     // installed at another commit, folder or hash
	SyncRemove   = "remove"   // installed, not in the lock
	SyncConflict = "conflict" // installed under the lock's name from another source
)

// SyncChange is one difference between the installed set and a lock.
type SyncChange struct {
	Name      string `json:"name"`
	Action    string `json:"action"`
	Source    string `json:"source,omitempty"`     // the lock's source (the installed one for remove)
	OldSource string `json:"old_source,omitempty"` // the installed source, for a conflict
	OldSHA    string `json:"old_sha,omitempty"`
	NewSHA    string `json:"new_sha,omitempty"`
	OldHash   string `json:"old_hash,omitempty"`
	NewHash   string `json:"new_hash,omitempty"`
	OldPath   string `json:"old_path,omitempty"`
	NewPath   string `json:"new_path,omitempty"`
}

// DiffLock lists what differs between the installed git skills and the
// lock, sorted by name. A skill matches when its source, folder, commit
// and recorded h1: hash equal the lock's. Trust is not compared: it is
// the local user's decision. Bundled and linked (dev) skills are never
// added or removed; a linked skill under a locked name is a conflict.
func DiffLock(installed []Entry, l *Lock) []SyncChange {
	byName := map[string]Entry{}
	for _, e := range installed {
		if e.Source != SourceBundled {
			byName[e.Canonical] = e
		}
	}
	var out []SyncChange
	inLock := map[string]bool{}
	for _, le := range l.Skills {
		inLock[le.Name] = true
		e, ok := byName[le.Name]
		c := SyncChange{Name: le.Name, Source: le.Source, NewSHA: le.Commit, NewHash: le.Hash, NewPath: le.Path}
		switch {
		case !ok:
			c.Action = SyncAdd
		case e.Source == SourceDev:
			// A linked folder is the user's own work: never replaced.
			c.Action, c.OldSource = SyncConflict, "the linked folder "+e.Path
		case e.URL != le.Source:
			c.Action, c.OldSource, c.OldSHA, c.OldHash = SyncConflict, e.URL, e.CommitSHA, e.DirHash
		case e.CommitSHA != le.Commit || e.DirHash != le.Hash || e.Subdir != le.Path:
			c.Action, c.OldSHA, c.OldHash, c.OldPath = SyncMove, e.CommitSHA, e.DirHash, e.Subdir
		default:
			continue
		}
		out = append(out, c)
	}
	for _, e := range installed {
		if e.fetched() && !inLock[e.Canonical] {
			out = append(out, SyncChange{Name: e.Canonical, Action: SyncRemove, Source: e.URL, OldSHA: e.CommitSHA, OldHash: e.DirHash, OldPath: e.Subdir})
		}
	}
	sortChanges(out)
	return out
}

func sortChanges(cs []SyncChange) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
}

// SyncRequest is what `agent skill sync` asks for.
type SyncRequest struct {
	AgentVersion string
	Progress     io.Writer // nil is silent
	// Trust is asked once with the skills sync would install or move to
	// content this home has not trusted them at (Entry.TrustedHashes):
	// those the lock marks trusted, and those trusted here from the same
	// folder of the same source. A lock's trust is a request: nil, or
	// false, installs them untrusted (files only).
	Trust func(names []string) (bool, error)
	// Done is told of each change once it is committed.
	Done func(SyncChange)
	// Untrusted is told of each skill that Trust was asked about and
	// that was installed untrusted, once it is committed.
	Untrusted func(SyncChange)
	Warn      func(msg string)
}

// Sync makes the installed set equal to the lock: each skill is fetched
// at the locked commit, refused unless its folder hashes to the locked h1:
// hash, then installed, moved or removed atomically (a kill leaves every
// skill old or new and the registry valid). A skill installed under a
// locked name from another source is a conflict: nothing is changed then.
// Otherwise an error for one skill does not stop the others; all errors
// are returned joined, with the changes that were made.
func (s *Pipeline) Sync(ctx context.Context, l *Lock, req SyncRequest, prep Prepare) ([]SyncChange, error) {
	installed, err := s.read()
	if err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	changes := DiffLock(installed, l)
	var conflicts []error
	for _, c := range changes {
		if c.Action == SyncConflict {
			conflicts = append(conflicts, fmt.Errorf("%w: %s is installed from %s, the lock has it from %s; remove it (agent skill remove %s) and sync again, or lock this machine's set instead",
				ErrLockConflict, c.Name, c.OldSource, c.Source, c.Name))
		}
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("sync: nothing was changed: %w", errors.Join(conflicts...))
	}
	byName := map[string]Entry{}
	for _, e := range installed {
		byName[e.Canonical] = e
	}
	// Trust follows content, not the lock: a skill stays trusted only at
	// content this home trusted it at, from the same folder of the same
	// source. A lock that names another commit (an unmerged branch, say)
	// is asked about, as is any skill it marks trusted.
	var askTrust []string
	asked := map[string]bool{}
	for _, c := range changes {
		le, _ := l.Find(c.Name)
		cur, ok := byName[c.Name]
		trustedHere := ok && cur.Trusted && sameFolder(cur, le)
		if c.Action != SyncRemove && (le.Trusted || trustedHere) && !knownTrusted(cur, ok, le, le.Hash) {
			askTrust = append(askTrust, c.Name)
			asked[c.Name] = true
		}
	}
	trust := false
	if len(askTrust) > 0 && req.Trust != nil {
		if trust, err = req.Trust(askTrust); err != nil {
			return nil, fmt.Errorf("sync: %w", err)
		}
	}
	var done []SyncChange
	var errs []error
	for _, c := range changes {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		var err error
		untrusted := false
		switch c.Action {
		case SyncRemove:
			_, err = s.Remove(ctx, c.Name)
		default:
			le, _ := l.Find(c.Name)
			e, ok := byName[c.Name]
			var cur *Entry
			if ok {
				cur = &e
			}
			granted := asked[c.Name] && trust
			var ne Entry
			ne, err = s.installLocked(ctx, le, cur, func(h1 string) bool { return granted || knownTrusted(e, ok, le, h1) }, req, prep)
			untrusted = asked[c.Name] && !ne.Trusted
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sync %s: %w", c.Name, err))
			continue
		}
		done = append(done, c)
		if req.Done != nil {
			req.Done(c)
		}
		if untrusted && req.Untrusted != nil {
			req.Untrusted(c)
		}
	}
	return done, errors.Join(errs...)
}

// sameFolder reports whether e is installed from le's source and folder.
func sameFolder(e Entry, le LockEntry) bool {
	return e.URL == le.Source && e.Subdir == le.Path
}

// knownTrusted reports whether this home trusted the skill (cur, when ok)
// at the content le pins, whose folder hashes to h1: from the same folder
// of the same source, at a hash it trusted, or at the trusted commit
// itself where the hash is not known.
func knownTrusted(cur Entry, ok bool, le LockEntry, h1 string) bool {
	if !ok || !sameFolder(cur, le) {
		return false
	}
	if h1 == "" {
		return cur.Trusted && cur.CommitSHA == le.Commit
	}
	return cur.trustedAt(h1)
}

// installLocked fetches le's commit by SHA, checks its folder against the
// locked hash (unless le.Hash is "": unknown) before anything of it runs,
// then installs it (cur nil) or swaps it in for cur, trusted when
// trusted says so of its folder's h1: hash or an accepted key signed it.
// It returns the entry written.
func (s *Pipeline) installLocked(ctx context.Context, le LockEntry, cur *Entry, trusted func(h1 string) bool, req SyncRequest, prep Prepare) (Entry, error) {
	if err := s.checkName(le.Name); err != nil {
		return Entry{}, fmt.Errorf("%w; no installed skill takes a bundled name: add it under another name (agent skill add --name) and lock again", err)
	}
	var w *work
	if err := s.Edit(func([]Entry) ([]Entry, error) {
		var err error
		w, err = s.newWork()
		return nil, err
	}); err != nil {
		return Entry{}, err
	}
	defer w.close()

	snap, err := s.fetchPinned(ctx, Entry{Origin: Origin{URL: le.Source, CommitSHA: le.Commit, Ref: le.Ref}}, req.Progress)
	if err != nil {
		return Entry{}, err
	}
	if fi, err := fs.Stat(snap.FS, gitsrc.FSPath(le.Path)); err != nil || !fi.IsDir() {
		return Entry{}, fmt.Errorf("%w: the skill folder %q is not in commit %s of %s", gitsrc.ErrNoSkill, le.Path, gitsrc.Short(le.Commit), le.Source)
	}
	repoDir := w.path("repo")
	if err := gitsrc.CheckoutSkill(snap, le.Path, repoDir, nil, s.Limits); err != nil {
		return Entry{}, fmt.Errorf("read %s at %s: %w", le.Source, gitsrc.Short(le.Commit), err)
	}
	skillDir := filepath.Join(repoDir, filepath.FromSlash(le.Path))
	got, _, err := HashSkill(skillDir)
	if err != nil {
		return Entry{}, fmt.Errorf("hash the files of %s: %w", le.Name, err)
	}
	if le.Hash != "" && got != le.Hash {
		return Entry{}, HashMismatch(le, got)
	}
	m, warns, err := gitsrc.LoadManifestAs(skillDir, filepath.ToSlash(le.Path))
	if err != nil {
		return Entry{}, err
	}
	if m.Plugin != nil && m.Plugin.Build != "" {
		if err := gitsrc.CheckoutSkill(snap, le.Path, repoDir, m, s.Limits); err != nil {
			return Entry{}, fmt.Errorf("read %s at %s: %w", le.Source, gitsrc.Short(le.Commit), err)
		}
	}
	if err := manifest.CheckCompatibility(m, req.AgentVersion); err != nil {
		return Entry{}, err
	}
	if req.Warn != nil {
		for _, p := range warns {
			req.Warn(p.String())
		}
	}
	version := le.Version
	if version == "" {
		version = m.Version
	}
	st := &Staged{
		Canonical: le.Name, Manifest: m, Warnings: warns,
		RepoDir: repoDir, SkillDir: skillDir, CommitSHA: le.Commit, Version: version,
	}
	now := s.now()
	var e Entry
	if cur != nil {
		e = *cur
		e.PreviousSHA, e.PreviousDirHash = cur.CommitSHA, cur.DirHash
		if !sameFolder(*cur, le) {
			e.TrustedHashes = nil // trusted content of another folder
		}
	} else {
		e = Entry{Canonical: le.Name, Name: m.Name, Path: s.skillDir(le.Name),
			Origin: Origin{Source: sourceKind(le.Source)}, History: History{InstalledAt: now}}
		if c, err := manifest.Canonical(m.Name); err != nil || c != le.Name {
			e.Name = le.Name // installed under another name (add --name)
		}
	}
	e.URL, e.Subdir, e.Ref, e.Constraint = le.Source, le.Path, le.Ref, le.Constraint
	e.CommitSHA, e.Version, e.Description, e.UpdatedAt = le.Commit, version, m.Description, now
	// A skill an accepted key signed is trusted for it (SPEC §18).
	e.Trusted = trusted(got) || snap.Signer != ""
	e.Signer = snap.Signer
	inst, err := s.stage(ctx, w, st, prep, &e)
	if err != nil {
		return Entry{}, err
	}
	if le.Hash != "" && e.DirHash != le.Hash {
		return Entry{}, HashMismatch(le, e.DirHash)
	}
	if cur == nil {
		return e, s.commitAdd(e, inst)
	}
	if cur.CommitSHA == e.CommitSHA {
		// Same commit, other folder or files: swapIn names its temp
		// folders by SHA, and recovery keys on them, so a move between
		// two folders of one commit goes through remove and add.
		if _, err := s.Remove(ctx, cur.Canonical); err != nil {
			return Entry{}, err
		}
		e.PreviousSHA, e.PreviousDirHash = "", ""
		return e, s.commitAdd(e, inst)
	}
	return e, s.commitMove(*cur, e, inst)
}

// HashMismatch is the error for a folder of le that hashes to got, not
// to the h1: the lock records.
func HashMismatch(le LockEntry, got string) error {
	return fmt.Errorf("%w: %s at commit %s of %s: the lock says %s, the fetched folder %q hashes to %s; nothing was changed for %s. If the lock is right, the source was tampered with; if the source is right, run agent skill lock on a machine you trust",
		ErrHashMismatch, le.Name, gitsrc.Short(le.Commit), le.Source, le.Hash, le.Path, got, le.Name)
}
