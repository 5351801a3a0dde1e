package plugbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Stamp fingerprints the files under dir (path, size, mode, mtime in
// nanoseconds; .git and __pycache__ left out) without reading them, so
// that a linked skill is rebuilt only when something in it changed. An
// edit changes the mtime; a same-size rewrite within one clock tick is the
// one change it can miss, which is acceptable for a development install.
func Stamp(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != dir && (d.Name() == ".git" || d.Name() == "__pycache__") {
			return filepath.SkipDir
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00%o\x00%d\n", filepath.ToSlash(rel), fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("stamp %s: %w", dir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
