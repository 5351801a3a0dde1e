package registry

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentskills/agent/registry/gitsrc"
)

// TrustRequest is what `agent skill trust` asks for.
type TrustRequest struct {
	Name string
}

// Trust marks a skill trusted and, since an untrusted skill's code never
// ran, builds its plugin and describes its tools now (through prep, as
// add does). The installed folder must still match the entry's DirHash
// (else ErrTampered), and the copy that is built must hash to it too, so
// what is built is what was pinned and reviewed.
//
// A skill without a plugin, or whose plugin was built while it was
// trusted before, is only marked.
func (s *Pipeline) Trust(ctx context.Context, req TrustRequest, prep Prepare) (Entry, error) {
	e, err := s.trust(ctx, req, prep)
	if err != nil {
		return Entry{}, fmt.Errorf("trust %s: %w", req.Name, err)
	}
	return e, nil
}

func (s *Pipeline) trust(ctx context.Context, req TrustRequest, prep Prepare) (Entry, error) {
	e, err := s.Get(req.Name)
	if err != nil {
		return Entry{}, err
	}
	if err := s.CheckIntegrity(e); err != nil {
		return Entry{}, err
	}
	m, _, err := LoadInstalled(e)
	if err != nil {
		return Entry{}, err
	}
	if m.Plugin == nil || e.Plugin != nil || prep == nil {
		return s.markTrusted(e, nil)
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

	// Build from a copy of the installed folder: it was just checked
	// against dir_hash, and the copy is hashed again by stage, so a change
	// in between is refused too. A plugin is a module of its own inside
	// the skill, so the folder is all the build needs (no network).
	skillDir := w.path("src")
	if err := gitsrc.CopySkill(e.Path, skillDir); err != nil {
		return Entry{}, fmt.Errorf("copy %s to build it: %w", e.Canonical, err)
	}
	st := &Staged{
		Canonical: e.Canonical, Manifest: m,
		RepoDir: skillDir, SkillDir: skillDir, CommitSHA: e.CommitSHA, Version: e.Version,
	}
	ne := e
	ne.Trusted = true
	inst, err := s.stage(ctx, w, st, prep, &ne)
	if err != nil {
		return Entry{}, err
	}
	if e.DirHash != "" && ne.DirHash != e.DirHash {
		return Entry{}, fmt.Errorf("%w: the files of %s changed while it was being trusted (%s, installed %s); run 'agent skill verify %s'",
			ErrTampered, e.Canonical, ne.DirHash, e.DirHash, e.Canonical)
	}
	return s.markTrusted(e, &trustBuild{entry: ne, inst: inst})
}

// trustBuild is a plugin built and described for Trust, to be committed.
type trustBuild struct {
	entry Entry
	inst  installable
}

// markTrusted commits trust, with the built plugin when b is set. The
// entry must not have moved on (an update or another trust) meanwhile.
func (s *Pipeline) markTrusted(e Entry, b *trustBuild) (Entry, error) {
	var out Entry
	err := s.lockedThen(func(entries []Entry) ([]Entry, error) {
		cur, err := find(entries, e.Canonical)
		if err != nil {
			return nil, err
		}
		if cur.CommitSHA != e.CommitSHA || cur.DirHash != e.DirHash {
			return nil, fmt.Errorf("it changed to %s while trusting; run agent skill trust %s again", gitsrc.Short(cur.CommitSHA), e.Canonical)
		}
		cur.Trusted = true
		if b != nil && cur.Plugin == nil {
			if err := b.inst.placePlugin(); err != nil {
				return nil, err
			}
			cur.Plugin, cur.Tools = b.entry.Plugin, b.entry.Tools
			cur.DirHash = b.entry.DirHash
		}
		out = cur
		return replace(entries, cur), nil
	}, func() {
		// An entry from before dir_hash was recorded gets its per-file
		// record now, so that changes can be named.
		if b != nil && e.DirHash == "" {
			integrityRecords(s.Home).write(e.Canonical, b.inst.record)
		}
	})
	if err != nil {
		return Entry{}, err
	}
	return out, nil
}

// maxTrustedHashes bounds Entry.TrustedHashes: the oldest are forgotten.
const maxTrustedHashes = 32

// trustedAt reports whether this home trusted e with its folder hashing
// to h1.
func (e Entry) trustedAt(h1 string) bool {
	return h1 != "" && (e.Trusted && e.DirHash == h1 || slices.Contains(e.TrustedHashes, h1))
}

// rememberTrust adds the hash of e's folder to ne's TrustedHashes when
// e was trusted and ne (what replaces it) is the same folder of the same
// source: moving on does not forget what this home trusted.
func (ne *Entry) rememberTrust(e Entry) {
	if !e.Trusted || e.DirHash == "" || e.URL != ne.URL || e.Subdir != ne.Subdir || slices.Contains(ne.TrustedHashes, e.DirHash) {
		return
	}
	hs := append(slices.Clip(ne.TrustedHashes), e.DirHash)
	if len(hs) > maxTrustedHashes {
		hs = hs[len(hs)-maxTrustedHashes:]
	}
	ne.TrustedHashes = hs
}
