package bundled

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

//go:embed skills/*/SKILL.md
var files embed.FS

type skill struct {
	entry    registry.Entry
	manifest *manifest.Manifest
}

// load parses every bundled SKILL.md once. A broken one is a bug caught by
// the tests, so it panics rather than hiding the skill.
var load = sync.OnceValue(func() map[string]skill {
	out, err := parse()
	if err != nil {
		panic(fmt.Sprintf("bundled skills: %v", err))
	}
	return out
})

func parse() (map[string]skill, error) {
	dirs, err := fs.ReadDir(files, "skills")
	if err != nil {
		return nil, err
	}
	out := map[string]skill{}
	for _, d := range dirs {
		file := path.Join("skills", d.Name(), manifest.ManifestFile)
		data, err := files.ReadFile(file)
		if err != nil {
			return nil, err
		}
		m, warnings, err := manifest.ParseManifest("bundled:"+file, data)
		if err != nil {
			return nil, err
		}
		canon, err := manifest.Canonical(m.Name)
		if err != nil {
			return nil, err
		}
		out[canon] = skill{
			entry: registry.Entry{
				Name:        m.Name,
				Canonical:   canon,
				Trusted:     true,
				NamedOnly:   m.Metadata["activation"] == "named",
				Description: m.Description,
				Origin:      registry.Origin{Source: registry.SourceBundled, Version: m.Version},
				// What listings use instead of parsing the file; a bundled
				// skill has no scripts folder.
				Listing: registry.ListingOf(m, warnings, []string{}),
			},
			manifest: m,
		}
	}
	return out, nil
}

// Entries returns registry entries (Source "bundled", Trusted true) for every
// bundled skill, sorted by canonical name. Path is empty: a bundled skill has
// no folder on disk. They come from a table generated from the SKILL.md
// files (TestEntriesTable keeps it so): parsing them took about as long as
// decoding the entries of 100 installed skills, in every listing.
func Entries() []registry.Entry {
	return slices.Clone(entriesTable)
}

// Has reports whether a skill with this canonical name is bundled: no
// other skill may take that name (registry.Store.Reserved).
func Has(canonical string) bool {
	_, found := slices.BinarySearchFunc(entriesTable, canonical, func(e registry.Entry, c string) int { return strings.Compare(e.Canonical, c) })
	return found
}

// File is the SKILL.md of the bundled skill with this canonical name, as
// embedded; ok is false when there is none.
func File(canonical string) (data []byte, ok bool) {
	for _, d := range mustDirs() {
		data, err := files.ReadFile(path.Join("skills", d, manifest.ManifestFile))
		if err != nil {
			continue
		}
		if m, _, err := manifest.ParseManifest("bundled", data); err == nil {
			if c, err := manifest.Canonical(m.Name); err == nil && c == canonical {
				return data, true
			}
		}
	}
	return nil, false
}

func mustDirs() []string {
	ents, _ := fs.ReadDir(files, "skills")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// Manifest parses the SKILL.md of the bundled skill with this canonical name.
// It returns registry.ErrNotFound (wrapped) when there is none. The manifest
// is shared: callers must not modify it.
func Manifest(canonical string) (*manifest.Manifest, error) {
	s, ok := load()[canonical]
	if !ok {
		return nil, fmt.Errorf("bundled skill %q: %w", canonical, registry.ErrNotFound)
	}
	return s.manifest, nil
}
