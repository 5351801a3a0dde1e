package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// LoadInstalled reads an installed skill's SKILL.md and, when the entry
// recorded its sha256 at install, refuses it with ErrModified if it changed
// since: a skill edited on disk after the user reviewed and installed it is
// not used until it is reinstalled. The bytes that are hashed are the bytes
// that are parsed, so the file cannot change in between.
func LoadInstalled(e Entry) (*Manifest, []Problem, error) {
	if e.ManifestSHA256 == "" {
		return LoadManifest(e.Path)
	}
	file := filepath.Join(e.Path, ManifestFile)
	data, err := readManifestFile(file)
	if err != nil {
		var me *ManifestError
		if errors.As(err, &me) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("load %s: %w", e.Canonical, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != e.ManifestSHA256 {
		return nil, nil, fmt.Errorf("%w: %s of skill %s changed after install (sha256 %s, installed %s); it is not used. "+
			"Discard the edit with 'agent skill update %s' once a new commit exists, or 'agent skill remove %s --yes' and add it again",
			ErrModified, file, e.Canonical, short(got), short(e.ManifestSHA256), e.Canonical, e.Canonical)
	}
	return ParseManifest(file, data)
}

// fileSHA256 is the hex sha256 of a regular file's contents.
func fileSHA256(p string) (string, error) {
	data, err := readManifestFile(p)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// readManifestFile reads a SKILL.md that must be a regular file (not a
// link) of at most maxManifestSize bytes.
func readManifestFile(file string) ([]byte, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &ManifestError{Problems: []Problem{{File: file, Message: "no SKILL.md here; a skill folder needs a SKILL.md with YAML front matter (name, description)"}}}
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &ManifestError{Problems: []Problem{{File: file, Message: "SKILL.md is a symbolic link or not a regular file; replace it with the real file"}}}
	}
	// O_NOFOLLOW: a link swapped in after the Lstat is refused too.
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxManifestSize {
		return nil, &ManifestError{Problems: []Problem{{File: file, Message: fmt.Sprintf("SKILL.md is larger than %d bytes; move long material to references/", maxManifestSize)}}}
	}
	return data, nil
}
