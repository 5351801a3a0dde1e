package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/registry/gitsrc"
)

// SourceDev marks a skill linked with `agent skill link`: a development
// install that uses the author's folder in place. It has no pin and no
// hash check, it is trusted (the user's own folder), and its plugin is
// rebuilt when its sources change (Entry.Stamp).
const SourceDev = "dev"

// ErrLinked: the operation does not apply to a linked (dev) skill.
var ErrLinked = errors.New("skill is linked for development")

// LinkRequest is what `agent skill link` asks for.
type LinkRequest struct {
	Dir          string // the skill folder, used in place
	AgentVersion string
	// Stamp fingerprints Dir's sources; it is recorded so that a later
	// Link can be skipped when nothing changed.
	Stamp string
	// Warn receives SKILL.md warnings; nil drops them.
	Warn func(msg string)
}

// Link registers the skill folder req.Dir in place, letting prep build its
// plugin and describe its tools; linking again rebuilds. A skill installed
// from git under the same name is left alone: that is an error.
func (s *Pipeline) Link(ctx context.Context, req LinkRequest, prep Prepare) (Entry, error) {
	e, err := s.link(ctx, req, prep)
	if err != nil {
		return Entry{}, fmt.Errorf("link %s: %w", req.Dir, err)
	}
	return e, nil
}

func (s *Pipeline) link(ctx context.Context, req LinkRequest, prep Prepare) (Entry, error) {
	dir, err := filepath.Abs(req.Dir)
	if err != nil {
		return Entry{}, err
	}
	m, warns, err := gitsrc.LoadManifest(dir)
	if err != nil {
		return Entry{}, err
	}
	canonical, err := manifest.Canonical(m.Name)
	if err != nil {
		return Entry{}, err
	}
	if err := s.checkName(canonical); err != nil {
		return Entry{}, fmt.Errorf("%w; no linked skill takes a bundled name: give the folder's SKILL.md another name", err)
	}
	if err := manifest.CheckCompatibility(m, req.AgentVersion); err != nil {
		return Entry{}, err
	}
	if req.Warn != nil {
		for _, p := range warns {
			req.Warn(p.String())
		}
	}
	var w *work
	var old *Entry
	err = s.Edit(func(entries []Entry) ([]Entry, error) {
		if e, err := find(entries, canonical); err == nil {
			if e.Source != SourceDev {
				return nil, linkTaken(e)
			}
			old = &e
		}
		var err error
		w, err = s.newWork()
		return nil, err
	})
	if err != nil {
		return Entry{}, err
	}
	defer w.close()
	if err := os.MkdirAll(w.path("plugin"), 0o755); err != nil {
		return Entry{}, err
	}
	st := &Staged{
		Canonical: canonical, Manifest: m, Warnings: warns,
		RepoDir: dir, SkillDir: dir, Version: m.Version,
		PluginOut: filepath.Join(w.path("plugin"), pluginFile(canonical)),
	}
	if prep != nil {
		if err := prep(ctx, st); err != nil {
			return Entry{}, fmt.Errorf("prepare %s: %w", canonical, err)
		}
	}
	now := s.now()
	e := Entry{
		Name: m.Name, Canonical: canonical, Trusted: true, Path: dir,
		Description: m.Description, Tools: st.Tools,
		Origin:  Origin{Source: SourceDev, Version: m.Version},
		History: History{InstalledAt: now, UpdatedAt: now},
		Dev:     Dev{Stamp: req.Stamp},
	}
	if old != nil {
		e.InstalledAt = old.InstalledAt
	}
	var from, to string
	if p := st.Plugin; p != nil {
		switch path := filepath.Clean(p.Path); {
		case path == filepath.Clean(st.PluginOut):
			from = path
			// A new folder per build: a host still running the previous
			// binary keeps it until recovery drops folders no entry uses.
			to = filepath.Join(s.PluginsDir(), canonical, "dev-"+gitsrc.Short(p.SHA256), pluginFile(canonical))
			e.Plugin = &Plugin{Path: to, SHA256: p.SHA256}
		case within(dir, path):
			e.Plugin = &Plugin{Path: path, SHA256: p.SHA256}
		default:
			return Entry{}, fmt.Errorf("prepare %s: plugin path %s is neither Staged.PluginOut nor inside the skill", canonical, p.Path)
		}
	}
	if err := ctx.Err(); err != nil {
		return Entry{}, err
	}
	err = s.Edit(func(entries []Entry) ([]Entry, error) {
		if cur, err := find(entries, canonical); err == nil && cur.Source != SourceDev {
			return nil, linkTaken(cur)
		}
		if from != "" {
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return nil, err
			}
			if err := os.Rename(from, to); err != nil {
				return nil, err
			}
		}
		return replace(entries, e), nil
	})
	if err != nil {
		return Entry{}, err
	}
	return e, nil
}

// linkTaken is ErrAlreadyInstalled for link, which has no --name and no
// update: the way out is to remove the install or rename the folder's skill.
func linkTaken(e Entry) error {
	return fmt.Errorf("%w: %s (from %s at %s); a linked folder cannot share its name: remove the install first (agent skill remove %s --yes), or give the folder's SKILL.md another name",
		ErrAlreadyInstalled, e.Canonical, e.URL, gitsrc.Short(e.CommitSHA), e.Canonical)
}
