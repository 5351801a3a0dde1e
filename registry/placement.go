package registry

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Placement is a copy of an installed skill (or, with Link, a symbolic
// link to it) in another agent's skill folder (SPEC §19). The placed
// folder is Dir/<canonical>. internal/app/placement makes and checks them;
// the registry only records them, so that every command keeps them in
// step and skills.lock carries them to other machines.
type Placement struct {
	// Folder is the folder as the agent table writes it: relative to the
	// project (".claude/skills") or to the home folder ("~/.agents/skills").
	Folder string `json:"folder"`
	// Dir is Folder resolved when the placement was made.
	Dir    string   `json:"dir"`
	Agents []string `json:"agents"`
	Link   bool     `json:"link,omitempty"`
	// Placed is the h1: hash of the copy this host wrote there ("link" for
	// a link), empty while nothing is placed (an untrusted skill). A folder
	// found there that this host did not write is never overwritten.
	Placed string `json:"placed,omitempty"`
	// Made lists the parent folders created for the placement, outermost
	// first; they are removed with it when left empty.
	Made []string `json:"made,omitempty"`
}

// SkillDir is the folder the placement puts the skill named canonical in.
func (p Placement) SkillDir(canonical string) string { return filepath.Join(p.Dir, canonical) }

// LockPlacement is a placement in skills.lock: where, for whom, how.
type LockPlacement struct {
	Folder string   `json:"folder"`
	Agents []string `json:"agents"`
	Link   bool     `json:"link,omitempty"`
}

func lockPlacements(ps []Placement) []LockPlacement {
	var out []LockPlacement
	for _, p := range ps {
		out = append(out, LockPlacement{Folder: p.Folder, Agents: append([]string(nil), p.Agents...), Link: p.Link})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Folder < out[j].Folder })
	return out
}

// check refuses a placement folder that could name a path outside the
// project or the home folder.
func (p LockPlacement) check() error {
	rest := strings.TrimPrefix(p.Folder, "~/")
	if !fs.ValidPath(rest) || rest == "." {
		return fmt.Errorf("placement folder %q is not a folder inside the project or '~/' (slash-separated, no . or ..)", p.Folder)
	}
	if len(p.Agents) == 0 {
		return fmt.Errorf("placement folder %q names no agent", p.Folder)
	}
	return nil
}

// SetPlacements records a skill's placements.
func (s *Store) SetPlacements(name string, ps []Placement) (Entry, error) {
	var out Entry
	err := s.Edit(func(entries []Entry) ([]Entry, error) {
		e, err := find(entries, name)
		if err != nil {
			return nil, err
		}
		e.Placements = ps
		out = e
		return replace(entries, e), nil
	})
	if err != nil {
		return Entry{}, fmt.Errorf("record placements of %s: %w", name, err)
	}
	return out, nil
}

// VerifyCopy compares a copy of an installed skill (a placement) with the
// files recorded at install, reading every file of the copy. The record
// is not written: it describes the install, not the copy.
func (s *Store) VerifyCopy(e Entry, dir string) (Changes, error) {
	c := Changes{Want: e.DirHash}
	h1, got, err := HashSkill(dir)
	if err != nil {
		return c, fmt.Errorf("verify the copy of %s in %s: %w", e.Canonical, dir, err)
	}
	c.Got = h1
	if h1 == e.DirHash {
		return Changes{}, nil
	}
	want := integrityRecords(s.Home).read(e)
	if want == nil {
		// No per-file record: the install itself, when it is intact,
		// names the files.
		if ih, rec, err := HashSkill(e.Path); err == nil && ih == e.DirHash {
			want = rec
		}
	}
	if want == nil {
		c.Unnamed = true
		return c, nil
	}
	for n, r := range got.Files {
		w, ok := want.Files[n]
		switch {
		case !ok:
			c.Added = append(c.Added, n)
		case w.SHA256 != r.SHA256:
			c.Changed = append(c.Changed, n)
		}
	}
	for n := range want.Files {
		if _, ok := got.Files[n]; !ok {
			c.Removed = append(c.Removed, n)
		}
	}
	sort.Strings(c.Changed)
	sort.Strings(c.Added)
	sort.Strings(c.Removed)
	return c, nil
}
