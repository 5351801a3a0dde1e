package registry

import (
	"context"
	"fmt"
	"io"
	"io/fs"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// Inspect fetches src as add does and hands fn the skills selectors pick
// (every valid one when there are none), each with its files: nothing is
// written to the store, nothing is built, nothing runs (`agent skill
// audit <source>`).
func (s *Pipeline) Inspect(ctx context.Context, src gitsrc.Source, selectors []string, progress io.Writer, fn func([]Reviewed) error) error {
	snap, err := s.git().Fetch(ctx, s.fetchRequest(src.URL, src.Ref, src.Constraint, progress))
	if err != nil {
		return fmt.Errorf("inspect %s: %w", src.Raw, err)
	}
	defer snap.Close()
	d, err := gitsrc.Discover(snap.FS, gitsrc.RepoName(src.URL))
	if err != nil {
		return fmt.Errorf("inspect %s: %w", src.Raw, err)
	}
	sels, err := d.Select(selectors, len(selectors) == 0, src.Raw)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", src.Raw, err)
	}
	out := make([]Reviewed, 0, len(sels))
	for _, sel := range sels {
		canonical, err := manifest.Canonical(sel.Manifest.Name)
		if err != nil {
			return fmt.Errorf("inspect %s: %w", src.Raw, err)
		}
		out = append(out, Reviewed{Canonical: canonical, Path: sel.Dir, Manifest: sel.Manifest, Warnings: sel.Warnings, FS: skillFS(snap, sel.Dir)})
	}
	return fn(out)
}

// skillFS is the folder dir ("" for the root) of a fetched commit.
func skillFS(snap *gitsrc.Snapshot, dir string) fs.FS {
	if dir == "" || dir == "." {
		return snap.FS
	}
	sub, err := fs.Sub(snap.FS, dir)
	if err != nil {
		return errFS{err}
	}
	return sub
}

// errFS fails every open: a folder fs.Sub refused.
type errFS struct{ err error }

func (e errFS) Open(string) (fs.File, error) { return nil, e.err }
