package gitsrc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentskills/agent/registry/manifest"
)

// ManifestPath is the path of dir's manifest on disk (manifest.FindFile
// through an os.Root at dir): dir/SKILL.md, else dir/skill.md; "" when dir
// holds neither (or cannot be opened).
func ManifestPath(dir string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	name := manifest.FindFile(root.FS(), ".")
	if _, err := root.Lstat(name); err != nil {
		return ""
	}
	return filepath.Join(dir, name)
}

// ReadManifest reads dir's manifest (SKILL.md, else skill.md:
// manifest.FindFile) from disk with manifest.Read, through an os.Root at
// dir so that a SKILL.md that is a link, or is swapped for one, can never
// make the host read a file outside the skill. file is the path problems
// name.
func ReadManifest(dir string) (data []byte, file string, err error) {
	file = filepath.Join(dir, manifest.ManifestFile)
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// As for a folder without SKILL.md: the same problem.
		_, err = manifest.Read(emptyFS{}, manifest.ManifestFile, file)
		return nil, file, err
	}
	if err != nil {
		return nil, file, err
	}
	defer root.Close()
	name := manifest.FindFile(root.FS(), ".")
	file = filepath.Join(dir, name)
	data, err = manifest.Read(root.FS(), name, file)
	return data, file, err
}

// emptyFS holds no file.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// LoadManifest reads and parses dir/SKILL.md from disk. The folder's own
// name ("." is the current folder's) names a skill whose front matter
// gives none.
func LoadManifest(dir string) (*manifest.Manifest, []manifest.Problem, error) {
	data, file, err := ReadManifest(dir)
	if err != nil {
		var me *manifest.ManifestError
		if errors.As(err, &me) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("load manifest: %w", err)
	}
	folder := filepath.Base(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		folder = filepath.Base(abs)
	}
	return manifest.ParseManifestIn(file, folder, data)
}
