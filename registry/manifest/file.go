package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ReadFile reads a SKILL.md that must be a regular file (not a
// link) of at most MaxManifestSize bytes.
func ReadFile(file string) ([]byte, error) {
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
	data, err := io.ReadAll(io.LimitReader(f, MaxManifestSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifestSize {
		return nil, &ManifestError{Problems: []Problem{{File: file, Message: fmt.Sprintf("SKILL.md is larger than %d bytes; move long material to references/", MaxManifestSize)}}}
	}
	return data, nil
}
