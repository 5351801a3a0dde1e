package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

// Read reads the SKILL.md at name in fsys: a regular file (not a link,
// where fsys can tell one: os.DirFS and os.Root's FS can) of at most
// MaxManifestSize bytes. file names it in problems. The package does no
// I/O of its own: a caller that reads a folder on disk passes an os.Root's
// FS, so that no link can make it read a file outside the skill.
func Read(fsys fs.FS, name, file string) ([]byte, error) {
	fi, err := fs.Lstat(fsys, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &ManifestError{Problems: []Problem{{File: file, Message: "no SKILL.md here; a skill folder needs a SKILL.md with YAML front matter (name, description)"}}}
		}
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(file)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A file swapped in after the Lstat is checked again as opened.
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, notRegular(file)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifestSize {
		return nil, &ManifestError{Problems: []Problem{{File: file, Message: fmt.Sprintf("SKILL.md is larger than %d bytes; move long material to references/", MaxManifestSize)}}}
	}
	return data, nil
}

func notRegular(file string) error {
	return &ManifestError{Problems: []Problem{{File: file, Message: "SKILL.md is a symbolic link or not a regular file; replace it with the real file"}}}
}
