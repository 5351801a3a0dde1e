package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"

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
	// Both lists are sorted by canonical name: merge them, without copying
	// the (many) installed entries into a map.
	bund := bundled.Entries()
	out := make([]registry.Entry, 0, len(installed)+len(bund))
	i, j := 0, 0
	for i < len(installed) || j < len(bund) {
		switch {
		case j == len(bund) || i < len(installed) && installed[i].Canonical < bund[j].Canonical:
			out = append(out, installed[i])
			i++
		case i == len(installed) || bund[j].Canonical < installed[i].Canonical:
			out = append(out, withBuiltinTools(bund[j]))
			j++
		default: // same name: the installed skill wins
			out = append(out, installed[i])
			i, j = i+1, j+1
		}
	}
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
