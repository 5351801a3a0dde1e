package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agentskills/agent/registry/gitsrc"
)

// UpdateRequest is what `agent skill update` asks for.
type UpdateRequest struct {
	Names        []string // empty (or All) means every skill installed from git
	All          bool
	DryRun       bool
	AgentVersion string
	Progress     io.Writer // nil is silent
	// Confirm is asked before each change; nil means yes.
	Confirm func(p UpdatePlan) (bool, error)
	// Warn receives warnings, such as SKILL.md warnings of the new version.
	Warn func(msg string)
}

// UpdatePlan is what an update would change.
type UpdatePlan struct {
	Name       string   `json:"name"`
	OldSHA     string   `json:"old_sha"`
	NewSHA     string   `json:"new_sha"`
	OldVersion string   `json:"old_version,omitempty"`
	NewVersion string   `json:"new_version,omitempty"`
	LocalEdits []string `json:"local_edits,omitempty"` // files changed in the installed folder; discarded by the update
	// Requires is the new version's agent.requires (SPEC §21).
	Requires []manifest.Requirement `json:"-"`
}

// UpdateResult is one skill's outcome.
type UpdateResult struct {
	UpdatePlan
	Status string `json:"status"` // see the Status constants
}

// Update statuses.
const (
	StatusUpdated     = "updated"
	StatusUpToDate    = "up-to-date"
	StatusPinned      = "pinned"
	StatusWouldUpdate = "would-update"
	StatusDeclined    = "declined"
)

// Update moves skills forward within what was recorded at add: the highest
// tag matching the constraint, or the tip of the branch (the default branch
// when none was given). Skills pinned to a tag or commit are left alone.
// Each skill is updated atomically; an error for one does not stop the
// others, and all errors are returned joined.
func (s *Pipeline) Update(ctx context.Context, req UpdateRequest, prep Prepare) ([]UpdateResult, error) {
	entries, err := s.read()
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	var targets []Entry
	if req.All || len(req.Names) == 0 {
		for _, e := range entries {
			if e.fetched() {
				targets = append(targets, e)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, n := range req.Names {
			e, err := find(entries, n)
			if err != nil {
				return nil, fmt.Errorf("update %s: %w", n, err)
			}
			if !seen[e.Canonical] {
				seen[e.Canonical] = true
				targets = append(targets, e)
			}
		}
	}
	var results []UpdateResult
	var errs []error
	for _, e := range targets {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		r, err := s.updateOne(ctx, e, req, prep)
		if err != nil {
			errs = append(errs, fmt.Errorf("update %s: %w", e.Canonical, err))
			continue
		}
		results = append(results, r)
	}
	return results, errors.Join(errs...)
}

func (s *Pipeline) updateOne(ctx context.Context, e Entry, req UpdateRequest, prep Prepare) (UpdateResult, error) {
	if e.Source == SourceDev {
		return UpdateResult{}, fmt.Errorf("%w: it is rebuilt from %s when its sources change", ErrLinked, e.Path)
	}
	res := UpdateResult{UpdatePlan: UpdatePlan{Name: e.Canonical, OldSHA: e.CommitSHA, NewSHA: e.CommitSHA, OldVersion: e.Version, NewVersion: e.Version}}
	if e.Constraint == "" && e.Ref != "" && gitsrc.IsHex(e.Ref) && len(e.Ref) >= 4 && len(e.CommitSHA) >= len(e.Ref) && e.CommitSHA[:len(e.Ref)] == e.Ref {
		res.Status = StatusPinned
		return res, nil
	}
	var w *work
	if err := s.Edit(func([]Entry) ([]Entry, error) {
		var err error
		w, err = s.newWork()
		return nil, err
	}); err != nil {
		return res, err
	}
	defer w.close()

	fr := s.fetchRequest(e.URL, e.Ref, e.Constraint, req.Progress)
	// A partial fetch where the server allows it: the new commit's trees
	// and the skill folder's new blobs only.
	fr.Skills = []string{gitsrc.FSPath(e.Subdir)}
	snap, err := s.git().Fetch(ctx, fr)
	if err != nil {
		return res, err
	}
	defer snap.Close()
	if snap.Kind == "tag" && e.Constraint == "" || snap.Kind == "commit" {
		res.Status = StatusPinned
		return res, nil
	}
	newSHA := snap.PinOf(e.Subdir)
	if newSHA == e.CommitSHA {
		res.Status = StatusUpToDate
		return res, nil
	}
	if fi, err := fs.Stat(snap.FS, gitsrc.FSPath(e.Subdir)); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("%w: the skill folder %q is gone at %s; remove the skill and add it again", gitsrc.ErrNoSkill, e.Subdir, gitsrc.Short(newSHA))
	}
	if err := snap.Need(ctx, e.Subdir); err != nil {
		return res, err
	}
	repoDir := w.path("repo")
	if err := gitsrc.CheckoutSkill(snap, e.Subdir, repoDir, nil, s.Limits); err != nil {
		return res, fmt.Errorf("read %s at %s: %w", e.URL, gitsrc.Short(newSHA), err)
	}
	skillDir := filepath.Join(repoDir, filepath.FromSlash(e.Subdir))
	m, warns, err := gitsrc.LoadManifestAs(skillDir, filepath.ToSlash(e.Subdir))
	if err != nil {
		return res, err
	}
	if m.Plugin != nil && m.Plugin.Build != "" {
		if err := snap.Need(ctx, neededDirs(snap, []gitsrc.Found{{Dir: e.Subdir, Manifest: m}})...); err != nil {
			return res, err
		}
		if err := gitsrc.CheckoutSkill(snap, e.Subdir, repoDir, m, s.Limits); err != nil {
			return res, fmt.Errorf("read %s at %s: %w", e.URL, gitsrc.Short(newSHA), err)
		}
	}
	version := snap.Version
	if version == "" {
		version = m.Version
	}
	res.NewSHA, res.NewVersion = newSHA, version
	if res.Requires, err = m.Requires(); err != nil {
		return res, fmt.Errorf("its new version at %s: %w", gitsrc.Short(newSHA), err)
	}
	res.LocalEdits = s.editsOf(snap, e)
	if req.DryRun {
		res.Status = StatusWouldUpdate
		return res, nil
	}
	if err := manifest.CheckCompatibility(m, req.AgentVersion); err != nil {
		return res, err
	}
	if req.Confirm != nil {
		ok, err := req.Confirm(res.UpdatePlan)
		if err != nil {
			return res, err
		}
		if !ok {
			res.Status = StatusDeclined
			return res, nil
		}
	}
	if req.Warn != nil {
		for _, p := range warns {
			req.Warn(p.String())
		}
	}
	st := &Staged{
		Canonical: e.Canonical, Manifest: m, Warnings: warns,
		RepoDir: repoDir, SkillDir: skillDir, CommitSHA: newSHA, Version: version,
	}
	ne := e
	ne.CommitSHA, ne.Version, ne.PreviousSHA, ne.PreviousDirHash = newSHA, version, e.CommitSHA, e.DirHash
	ne.UpdatedAt = s.now()
	ne.Description = m.Description
	ne.Signer = snap.Signer
	inst, err := s.stage(ctx, w, st, prep, &ne)
	if err != nil {
		return res, err
	}
	if err := s.commitMove(e, ne, inst); err != nil {
		return res, err
	}
	res.Status = StatusUpdated
	return res, nil
}

// commitMove swaps the staged folder of ne (a new commit of the installed
// skill e) into place and writes ne; update, sync and rollback share it. A
// kill at any point leaves e or ne installed: recovery swaps back a folder
// whose entry was not written (the .new and .old names). It refuses when
// the entry moved or its trust changed since e was read.
func (s *Pipeline) commitMove(e, ne Entry, inst installable) error {
	newDir := filepath.Join(s.tmpDir(), e.Canonical+".new."+ne.CommitSHA)
	oldDir := filepath.Join(s.tmpDir(), e.Canonical+".old."+e.CommitSHA)
	return s.lockedThen(func(entries []Entry) ([]Entry, error) {
		cur, err := find(entries, e.Canonical)
		if err != nil {
			return nil, err
		}
		if cur.CommitSHA != e.CommitSHA {
			return nil, fmt.Errorf("it changed to %s meanwhile; run the command again", gitsrc.Short(cur.CommitSHA))
		}
		if cur.Trusted != e.Trusted {
			return nil, fmt.Errorf("its trust changed meanwhile; run the command again")
		}
		ne.rememberTrust(cur)
		if err := s.swapIn(inst.skill, newDir, oldDir, ne.Path); err != nil {
			return nil, err
		}
		if err := inst.placePlugin(); err != nil {
			return nil, err
		}
		s.at("update:plugin")
		return replace(entries, ne), nil
	}, func() {
		integrityRecords(s.Home).write(e.Canonical, inst.record)
		s.at("update:committed")
		_ = os.RemoveAll(newDir)
		_ = os.Remove(newDir + ".ino")
		_ = os.RemoveAll(oldDir)
		if e.Plugin != nil && (ne.Plugin == nil || filepath.Dir(e.Plugin.Path) != filepath.Dir(ne.Plugin.Path)) &&
			within(s.PluginsDir(), e.Plugin.Path) {
			_ = os.RemoveAll(filepath.Dir(e.Plugin.Path))
		}
	})
}

// localEdits lists files in the installed folder that differ from the
// installed commit: changed, added or deleted (slash paths, sorted). If the
// old commit is no longer in the repository it cannot tell, and says so.
func localEdits(snap *gitsrc.Snapshot, e Entry) []string {
	want, err := snap.BlobHashes(e.CommitSHA, e.Subdir)
	if err != nil {
		return []string{"(cannot compare: commit " + gitsrc.Short(e.CommitSHA) + " is no longer in the repository)"}
	}
	var edits []string
	seen := map[string]bool{}
	_ = filepath.WalkDir(e.Path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(e.Path, p)
		rel = filepath.ToSlash(rel)
		seen[rel] = true
		h, ok := want[rel]
		if !ok {
			edits = append(edits, rel+" (added)")
			return nil
		}
		var data []byte
		if d.Type()&fs.ModeSymlink != 0 {
			t, err := os.Readlink(p)
			if err != nil {
				return nil
			}
			data = []byte(t)
		} else if data, err = os.ReadFile(p); err != nil {
			return nil
		}
		if plumbing.ComputeHash(plumbing.BlobObject, data) != h {
			edits = append(edits, rel+" (modified)")
		}
		return nil
	})
	for rel := range want {
		if !seen[rel] {
			edits = append(edits, rel+" (deleted)")
		}
	}
	sort.Strings(edits)
	return edits
}

// swapIn puts the staged folder at dst. With RENAME_EXCHANGE the swap is
// atomic and the old folder ends up at newDir; the staged folder's inode is
// recorded first so recovery can tell whether the swap happened. Without
// it, the old folder is renamed to oldDir first.
func (s *Pipeline) swapIn(staged, newDir, oldDir, dst string) error {
	if err := os.Rename(staged, newDir); err != nil {
		return err
	}
	ino, ok := inode(newDir)
	if !ok {
		return fmt.Errorf("stat %s: no inode", newDir)
	}
	if err := os.WriteFile(newDir+".ino", []byte(strconv.FormatUint(ino, 10)), 0o644); err != nil {
		return err
	}
	s.at("update:staged")
	err := swapWith(s.exchange, newDir, dst)
	if err == nil {
		s.at("update:swapped")
		return nil
	}
	if _, serr := os.Lstat(dst); serr != nil {
		// Nothing installed to exchange with (deleted by hand): plain move.
		return os.Rename(newDir, dst)
	}
	// No RENAME_EXCHANGE here (errors.ErrUnsupported, EINVAL): two renames.
	if err := os.Rename(dst, oldDir); err != nil {
		return err
	}
	s.at("update:moved-old")
	return os.Rename(newDir, dst)
}
