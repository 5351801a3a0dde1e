package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentskills/agent/internal/app/bundled"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/trust"
)

// Installed is what the workspace reads of the registry store: the
// installed entries and the folders the user trusted. A narrow port, so
// the workspace does not depend on the whole *registry.Store.
type Installed interface {
	List() ([]registry.Entry, error)
	Get(name string) (registry.Entry, error)
	TrustedFolders() ([]trust.FolderTrust, error)
}

// AllEntries merges installed, bundled and discovered skills, sorted by
// canonical name. No installed or discovered skill takes a bundled name
// (SPEC §5): add and link refuse one, and an installed one from an older
// registry is left out, as a discovered one is. A discovered skill never
// takes an installed name either. The warnings say which skills were left
// out.
func AllEntries(ctx context.Context, store Installed, d Discovery) ([]registry.Entry, []string, error) {
	installed, err := store.List()
	if err != nil {
		return nil, nil, err
	}
	found, warnings, err := discover(store, d, installed)
	if err != nil {
		return nil, nil, err
	}
	// Both lists are sorted by canonical name, and the bundled skills are
	// few: insert them into the installed list (ours to change), which
	// the registry returns with room for them, instead of copying 1,000
	// entries.
	out := installed
	for _, b := range bundled.Entries() {
		i, ok := slices.BinarySearchFunc(out, b.Canonical, func(e registry.Entry, c string) int { return strings.Compare(e.Canonical, c) })
		switch {
		case !ok:
			out = slices.Insert(out, i, withBuiltinTools(b))
		default:
			warnings = append(warnings, bundledTaken(out[i]))
			out[i] = withBuiltinTools(b)
		}
	}
	out, more := mergeDiscovered(out, found)
	return out, append(warnings, more...), nil
}

// bundledTaken is the warning for an installed skill that has a bundled
// skill's name, which an older agent let add install.
func bundledTaken(e registry.Entry) string {
	return fmt.Sprintf("installed skill %s (from %s) is not loaded: %s is the name of a skill bundled with agent, and no installed skill takes a bundled name; remove it (agent skill remove %s --yes) and add it again under another name (agent skill add --name)",
		e.Canonical, e.URL, e.Canonical, e.Canonical)
}

// discover finds the skills of d with their trust.
func discover(store Installed, d Discovery, installed []registry.Entry) ([]registry.Entry, []string, error) {
	found, warnings := discovered(d, installed)
	if len(found) == 0 {
		return nil, warnings, nil
	}
	trusted, err := store.TrustedFolders()
	if err != nil {
		return nil, nil, err
	}
	for i := range found {
		applyTrust(&found[i], trusted)
	}
	return found, warnings, nil
}

// FindEntry returns the installed, bundled or discovered skill with this
// name.
func FindEntry(ctx context.Context, store Installed, d Discovery, name string) (registry.Entry, error) {
	canon, err := manifest.Canonical(name)
	if err != nil {
		return registry.Entry{}, err
	}
	// The bundled skill first: it keeps its name (AllEntries).
	var names []string
	for _, b := range bundled.Entries() {
		if b.Canonical == canon {
			return withBuiltinTools(b), nil
		}
		names = append(names, b.Canonical)
	}
	e, err := store.Get(canon)
	if err == nil {
		return e, nil
	}
	if !errors.Is(err, registry.ErrNotFound) {
		return registry.Entry{}, err
	}
	if installed, lerr := store.List(); lerr == nil {
		for _, e := range installed {
			names = append(names, e.Canonical)
		}
		found, _, derr := discover(store, d, installed)
		if derr != nil {
			return registry.Entry{}, derr
		}
		for _, e := range found {
			if e.Canonical == canon {
				return e, nil
			}
			names = append(names, e.Canonical)
		}
	}
	if s := manifest.Suggest(name, names); s != "" {
		return registry.Entry{}, fmt.Errorf("%w; did you mean %s?", err, s)
	}
	return registry.Entry{}, err
}

// LoadManifest reads the manifest of an installed or bundled skill.
func LoadManifest(e registry.Entry) (*manifest.Manifest, []manifest.Problem, error) {
	if e.Source == registry.SourceBundled && (e.Path == "" || !DirExists(e.Path)) {
		m, err := bundled.Manifest(e.Canonical)
		return m, nil, err
	}
	// LoadInstalled also refuses a SKILL.md edited after install.
	return registry.LoadInstalled(e)
}

// ManifestName is manifest.FindName for front ends, which do not import
// the registry: the name of a skill folder's manifest (SKILL.md, else
// skill.md) given whether the folder has a file of a name.
func ManifestName(has func(name string) bool) string { return manifest.FindName(has) }

// DirExists reports whether p is a directory.
func DirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// BundledFile is the embedded SKILL.md of a bundled skill, for a front end
// that serves skills' files (a bundled skill has no folder of its own).
func BundledFile(canonical string) ([]byte, bool) { return bundled.File(canonical) }

// IsBundled reports whether e ships inside the binary.
func IsBundled(e *registry.Entry) bool { return e.Source == registry.SourceBundled }
