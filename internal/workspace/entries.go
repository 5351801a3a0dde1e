package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/agentskills/agent/internal/bundled"
	"github.com/agentskills/agent/registry"
)

// AllEntries merges installed and bundled skills, sorted by canonical name;
// an installed skill overrides a bundled one with the same canonical name.
func AllEntries(ctx context.Context, store *registry.Store) ([]registry.Entry, error) {
	installed, err := store.List()
	if err != nil {
		return nil, err
	}
	byCanon := map[string]registry.Entry{}
	for _, e := range bundled.Entries() {
		byCanon[e.Canonical] = withBuiltinTools(e)
	}
	for _, e := range installed {
		byCanon[e.Canonical] = e
	}
	out := make([]registry.Entry, 0, len(byCanon))
	for _, e := range byCanon {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Canonical < out[j].Canonical })
	return out, nil
}

// FindEntry returns the installed or bundled skill with this name.
func FindEntry(ctx context.Context, store *registry.Store, name string) (registry.Entry, error) {
	canon, err := registry.Canonical(name)
	if err != nil {
		return registry.Entry{}, err
	}
	e, err := store.Get(canon)
	if err == nil {
		return e, nil
	}
	if !errors.Is(err, registry.ErrNotFound) {
		return registry.Entry{}, err
	}
	var names []string
	for _, b := range bundled.Entries() {
		if b.Canonical == canon {
			return withBuiltinTools(b), nil
		}
		names = append(names, b.Canonical)
	}
	if installed, lerr := store.List(); lerr == nil {
		for _, e := range installed {
			names = append(names, e.Canonical)
		}
	}
	if s := registry.Suggest(name, names); s != "" {
		return registry.Entry{}, fmt.Errorf("%w; did you mean %s?", err, s)
	}
	return registry.Entry{}, err
}

// LoadManifest reads the manifest of an installed or bundled skill.
func LoadManifest(e registry.Entry) (*registry.Manifest, []registry.Problem, error) {
	if e.Source == registry.SourceBundled && (e.Path == "" || !DirExists(e.Path)) {
		m, err := bundled.Manifest(e.Canonical)
		return m, nil, err
	}
	// LoadInstalled also refuses a SKILL.md edited after install.
	return registry.LoadInstalled(e)
}

// DirExists reports whether p is a directory.
func DirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
