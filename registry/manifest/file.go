package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// FindName is the one rule for which file of a folder is its manifest:
// SKILL.md, else skill.md, as the Agent Skills reference validator
// (skills-ref's find_skill_md) looks for them; "" when the folder has
// neither. has reports whether the folder has an entry of that name that
// is not a folder (a link counts, so that Read refuses it by name).
// FindFile, gitsrc's discovery and the registry's listing give has over
// fs.FS, a cached directory listing and one lstat.
func FindName(has func(name string) bool) string {
	for _, n := range [...]string{ManifestFile, LowerManifestFile} {
		if has(n) {
			return n
		}
	}
	return ""
}

// IsName reports whether a file name is one of the manifest's names.
func IsName(name string) bool { return name == ManifestFile || name == LowerManifestFile }

// IsOtherCase reports whether a file name is SKILL.md in a case that no
// reader looks for (Skill.md): an author's slip that deserves the rename,
// not "no SKILL.md".
func IsOtherCase(name string) bool {
	return strings.EqualFold(name, ManifestFile) && !IsName(name)
}

// RenameHint is the advice for a manifest found as file (IsOtherCase),
// a path ending in its name.
func RenameHint(file string) string {
	to := sibling(file, ManifestFile)
	return fmt.Sprintf("%s is named in the wrong case; rename it to %s (git mv %s %s)", file, ManifestFile, file, to)
}

// FindFile is the path in fsys of the manifest of the folder dir
// (FindName); dir/SKILL.md when there is none, so that Read says so.
func FindFile(fsys fs.FS, dir string) string {
	n := FindName(func(name string) bool {
		fi, err := fs.Lstat(fsys, path.Join(dir, name))
		return err == nil && !fi.IsDir()
	})
	if n == "" {
		n = ManifestFile
	}
	return path.Join(dir, n)
}

// Read reads the SKILL.md at name in fsys: a regular file (not a link,
// where fsys can tell one: os.DirFS and os.Root's FS can) of at most
// MaxManifestSize bytes. file names it in problems. The package does no
// I/O of its own: a caller that reads a folder on disk passes an os.Root's
// FS, so that no link can make it read a file outside the skill.
func Read(fsys fs.FS, name, file string) ([]byte, error) {
	fi, err := fs.Lstat(fsys, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			msg := "no SKILL.md here; a skill folder needs a SKILL.md with YAML front matter (name, description)"
			if ents, rerr := fs.ReadDir(fsys, path.Dir(name)); rerr == nil {
				for _, e := range ents {
					if IsOtherCase(e.Name()) {
						msg = "no SKILL.md here; " + RenameHint(sibling(file, e.Name()))
					}
				}
			}
			return nil, &ManifestError{Problems: []Problem{{File: file, Message: msg}}}
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

// sibling replaces the manifest's name at the end of file with name,
// keeping file's separators; file is its folder's manifest path.
func sibling(file, name string) string {
	if len(file) < len(ManifestFile) || !strings.EqualFold(file[len(file)-len(ManifestFile):], ManifestFile) {
		return name
	}
	return file[:len(file)-len(ManifestFile)] + name
}

func notRegular(file string) error {
	return &ManifestError{Problems: []Problem{{File: file, Message: "SKILL.md is a symbolic link or not a regular file; replace it with the real file"}}}
}
