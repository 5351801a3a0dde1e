package placement

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/agentskills/agent/registry"
)

// Manager keeps the placements recorded in the registry in step with the
// installed skills: it makes them, replaces them after update and
// rollback, removes them on untrust and remove, and checks them.
type Manager struct {
	Store *registry.Store
	Env   Env
	// Warn receives what was skipped and why; nil drops it.
	Warn func(string)
	// Note receives what was placed or removed; nil drops it.
	Note func(string)
}

func (m *Manager) warnf(format string, args ...any) {
	if m.Warn != nil {
		m.Warn(fmt.Sprintf(format, args...))
	}
}

func (m *Manager) notef(format string, args ...any) {
	if m.Note != nil {
		m.Note(fmt.Sprintf(format, args...))
	}
}

// Path is where a placement puts the skill.
func Path(e registry.Entry, p registry.Placement) string {
	return p.SkillDir(e.Canonical)
}

// Add records placements of e for agents (user folders when global is
// set) and makes them. Folders e is already placed in that an agent reads
// serve it without another copy.
func (m *Manager) Add(e registry.Entry, agents []Agent, global, link bool) (registry.Entry, error) {
	if e.DirHash == "" && !link {
		return e, fmt.Errorf("place %s: no hash of its files is recorded (a linked or bundled skill), so a copy could not be verified; place it with --link", e.Canonical)
	}
	ps := slices.Clone(e.Placements)
	var rest []Agent
	for _, a := range agents {
		i := slices.IndexFunc(ps, func(p registry.Placement) bool {
			return a.Reads(p.Folder, global) && p.Dir == m.Env.Resolve(p.Folder)
		})
		if i < 0 {
			rest = append(rest, a)
			continue
		}
		if !slices.Contains(ps[i].Agents, a.Name) {
			ps[i].Agents = append(ps[i].Agents, a.Name)
		}
	}
	for _, t := range Plan(rest, global) {
		dir := m.Env.Resolve(t.Folder)
		if m.inStore(dir) {
			return e, fmt.Errorf("place %s for %s: %s: %w (AGENT_HOME is %s); Antigravity's .agent/skills in your home folder is agent's own skills folder, so run the command from your project folder, or set AGENT_HOME elsewhere", e.Canonical, strings.Join(t.Agents, ", "), dir, ErrInStore, m.Store.Home)
		}
		ps = append(ps, registry.Placement{Folder: t.Folder, Dir: dir, Agents: t.Agents, Link: link})
	}
	e.Placements = ps
	if !e.Trusted {
		m.warnf("%s is untrusted, so it is not placed yet; 'agent skill trust %s' places it for %s", e.Canonical, e.Canonical, agentList(ps))
	}
	return m.settle(e)
}

// Settle brings placements in step after a command changed the installed
// set: skills in before but not in after lose theirs; every skill in
// after is placed (trusted) or unplaced (untrusted) as recorded.
func (m *Manager) Settle(before, after []registry.Entry) error {
	var errs []error
	for _, b := range before {
		if slices.ContainsFunc(after, func(a registry.Entry) bool { return a.Canonical == b.Canonical }) {
			continue
		}
		for _, p := range b.Placements {
			if err := m.unplace(b, p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, a := range after {
		if len(a.Placements) == 0 {
			continue
		}
		if _, err := m.settle(a); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Remove takes every placement of e away (before e itself is removed).
func (m *Manager) Remove(e registry.Entry) error {
	var errs []error
	for _, p := range e.Placements {
		errs = append(errs, m.unplace(e, p))
	}
	return errors.Join(errs...)
}

// settle makes e's recorded placements match e and records the result.
func (m *Manager) settle(e registry.Entry) (registry.Entry, error) {
	var errs []error
	out := make([]registry.Placement, 0, len(e.Placements))
	for _, p := range e.Placements {
		q, keep, err := m.place(e, p)
		if err != nil {
			errs = append(errs, err)
		}
		if keep {
			out = append(out, q)
		}
	}
	if !slices.EqualFunc(out, e.Placements, samePlacement) || len(out) != len(e.Placements) {
		ne, err := m.Store.SetPlacements(e.Canonical, out)
		if err != nil {
			return e, errors.Join(append(errs, err)...)
		}
		e = ne
	}
	return e, errors.Join(errs...)
}

func samePlacement(a, b registry.Placement) bool {
	return a.Folder == b.Folder && a.Dir == b.Dir && a.Link == b.Link && a.Placed == b.Placed &&
		slices.Equal(a.Agents, b.Agents) && slices.Equal(a.Made, b.Made)
}

// place makes one placement match e: present and equal to the install
// when e is trusted, absent otherwise. keep is false when the placement is
// dropped from the record (a folder someone else made is there).
func (m *Manager) place(e registry.Entry, p registry.Placement) (registry.Placement, bool, error) {
	dst := Path(e, p)
	if m.inStore(p.Dir) {
		// A lock synced into a home whose AGENT_HOME is this project's
		// .agent: the copy would be the install itself, which unplace
		// would then delete.
		m.warnf("%s is inside agent's own store (AGENT_HOME %s), so %s is not placed there for %s", p.Dir, m.Store.Home, e.Canonical, agentList([]registry.Placement{p}))
		return p, false, nil
	}
	if !e.Trusted {
		if err := m.unplace(e, p); err != nil {
			return p, true, err
		}
		p.Placed, p.Made = "", nil
		return p, true, nil
	}
	want := e.DirHash
	if p.Link {
		want = "link"
	}
	fi, err := os.Lstat(dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return p, true, fmt.Errorf("place %s in %s: %w", e.Canonical, p.Dir, err)
	default:
		current := m.current(e, p, dst, fi)
		if current == want && want != "" {
			if p.Placed != want {
				m.notef("%s: %s already holds this skill as installed; it is kept", e.Canonical, dst)
			}
			p.Placed = want
			return p, true, nil
		}
		if p.Placed == "" {
			m.warnf("%s was not made by agent, so it is left alone and %s is not placed there for %s; remove that folder (or let the tool that made it do so) and run 'agent skill sync' or add again", dst, e.Canonical, agentList([]registry.Placement{p}))
			return p, false, nil
		}
		if current != "link" && p.Placed != "link" && current != p.Placed {
			m.warnf("%s was edited since it was placed; the edits are discarded and the installed files are placed again", dst)
		}
	}
	made, err := mkdirs(p.Dir)
	if err != nil {
		return p, true, fmt.Errorf("place %s: %w", e.Canonical, err)
	}
	if len(p.Made) == 0 {
		p.Made = made
	}
	if err := m.write(e, p, dst); err != nil {
		return p, true, fmt.Errorf("place %s in %s: %w", e.Canonical, p.Dir, err)
	}
	p.Placed = want
	m.notef("placed %s in %s (%s)", e.Canonical, dst, agentList([]registry.Placement{p}))
	return p, true, nil
}

// inStore reports whether dir is AGENT_HOME or inside it. Antigravity's
// project folder .agent/skills lies inside this host's own state folder
// .agent/, and in the home folder that is AGENT_HOME's default: there the
// two must never meet.
func (m *Manager) inStore(dir string) bool {
	if m.Store == nil || m.Store.Home == "" {
		return false
	}
	home, err := filepath.Abs(m.Store.Home)
	if err != nil {
		return false
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	// The folder may not exist yet: resolve its nearest existing parent.
	for p, rest := d, ""; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			d = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
	rel, err := filepath.Rel(home, d)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// current is what dst holds now: "link" for a link to the install, the h1
// hash of a copy, or "" for anything else.
func (m *Manager) current(e registry.Entry, p registry.Placement, dst string, fi fs.FileInfo) string {
	if fi.Mode()&fs.ModeSymlink != 0 {
		if t, err := os.Readlink(dst); err == nil && t == e.Path {
			return "link"
		}
		return ""
	}
	if !fi.IsDir() {
		return ""
	}
	h, _, err := registry.HashSkill(dst)
	if err != nil {
		return ""
	}
	return h
}

// write puts a fresh copy (or link) at dst, replacing what is there in
// one rename so that an agent never reads half a skill.
func (m *Manager) write(e registry.Entry, p registry.Placement, dst string) error {
	tmp, err := os.MkdirTemp(p.Dir, "."+e.Canonical+".agent-new-")
	if err != nil {
		return err
	}
	defer removeTree(tmp)
	next := filepath.Join(tmp, "skill")
	if p.Link {
		if err = os.Symlink(e.Path, next); err != nil && runtime.GOOS == "windows" {
			// ERROR_PRIVILEGE_NOT_HELD, without Developer Mode.
			return fmt.Errorf("%w; Windows makes symbolic links only in Developer Mode or for an administrator: turn Developer Mode on, or place a copy (without --link)", err)
		}
	} else {
		err = copyTree(e.Path, next)
	}
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		if err := os.Rename(dst, filepath.Join(tmp, "old")); err != nil {
			return err
		}
	}
	return os.Rename(next, dst)
}

// unplace removes what this host placed for p, and the folders it made
// for it once empty. A folder someone else made is left alone.
func (m *Manager) unplace(e registry.Entry, p registry.Placement) error {
	dst := Path(e, p)
	fi, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) || p.Placed == "" {
		m.removeMade(p)
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove the placement %s: %w", dst, err)
	}
	if p.Link && fi.Mode()&fs.ModeSymlink == 0 {
		m.warnf("%s is no longer the link agent made; it is left alone", dst)
		return nil
	}
	if err := removeTree(dst); err != nil {
		return fmt.Errorf("remove the placement %s: %w", dst, err)
	}
	m.notef("removed %s", dst)
	m.removeMade(p)
	return nil
}

func (m *Manager) removeMade(p registry.Placement) {
	for i := len(p.Made) - 1; i >= 0; i-- {
		if os.Remove(p.Made[i]) != nil {
			return // not empty: someone else uses it now
		}
	}
}

// Check is the state of one placement, for verify.
type Check struct {
	Path    string           `json:"path"`
	Agents  []string         `json:"agents"`
	Link    bool             `json:"link,omitempty"`
	Problem string           `json:"problem,omitempty"`
	Changes registry.Changes `json:"changes,omitzero"`
}

// OK reports whether the placement is as installed.
func (c Check) OK() bool { return c.Problem == "" && c.Changes.Empty() }

// Verify checks every placement of e against the install: a copy by its
// files (naming each changed one), a link by its target. An untrusted
// skill has no files placed, which is in order.
func (m *Manager) Verify(e registry.Entry) []Check {
	var out []Check
	for _, p := range e.Placements {
		dst := Path(e, p)
		c := Check{Path: dst, Agents: p.Agents, Link: p.Link}
		fi, err := os.Lstat(dst)
		switch {
		case !e.Trusted || p.Placed == "":
			if err == nil && p.Placed == "" && e.Trusted {
				c.Problem = "not placed: a folder agent did not make is there"
			}
		case err != nil:
			c.Problem = "missing; 'agent skill sync' or 'agent skill trust " + e.Canonical + "' places it again"
		case p.Link:
			if m.current(e, p, dst, fi) != "link" {
				c.Problem = "no longer a link to " + e.Path
			}
		case !fi.IsDir():
			c.Problem = "not a folder"
		default:
			ch, err := m.Store.VerifyCopy(e, dst)
			if err != nil {
				c.Problem = err.Error()
			}
			c.Changes = ch
		}
		out = append(out, c)
	}
	return out
}

func agentList(ps []registry.Placement) string {
	var names []string
	for _, p := range ps {
		for _, a := range p.Agents {
			if !slices.Contains(names, a) {
				names = append(names, a)
			}
		}
	}
	if len(names) == 0 {
		return "no agent"
	}
	out := names[0]
	for _, n := range names[1:] {
		out += ", " + n
	}
	return out
}
