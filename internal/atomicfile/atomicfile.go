// Package atomicfile replaces a file so that a reader sees the old content
// or the new, never a part: the data goes to a temporary file in the same
// folder, which is then renamed over the target. It does not fsync: its
// users write caches and indexes that are rebuilt when lost; registry.json,
// which must survive a power cut, has its own writer under the registry
// lock. No module served here provides this (see docs/design.md).
package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
)

// Write replaces path with data, with permissions perm. The temporary
// file is named after path with ".tmp-" and a random suffix, so a crash
// leaves at most such a file behind (readers that clean up glob for it),
// and it is removed when any step fails.
func Write(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	err = errors.Join(werr, f.Close())
	if err == nil && perm != 0o600 { // CreateTemp's mode
		err = os.Chmod(tmp, perm)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
