package placement

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Sentinel errors of placements.
var (
	// ErrUnknownAgent matches an --agent name that is not in the table.
	ErrUnknownAgent = errors.New("unknown agent")
	// ErrForeign matches a folder this host did not create: it is never
	// overwritten.
	ErrForeign = errors.New("folder not made by agent")
	// ErrInStore matches a placement folder inside AGENT_HOME, where the
	// installed skills themselves live.
	ErrInStore = errors.New("placement folder inside agent's own store")
)

// pycache is never copied: a placement holds the files the install's hash
// covers.
const pycache = "__pycache__"

// copyTree copies the regular files and folders of src into dst (which
// must not exist), files read-only (0444, or 0555 when executable) and
// folders 0555, so that an agent running the skill's scripts outside our
// sandbox writes no __pycache__ into it. Anything else (a link) is refused:
// an install holds none.
func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case d.IsDir():
			if d.Name() == pycache {
				return filepath.SkipDir
			}
			return os.Mkdir(to, 0o755)
		case t.IsRegular():
			return copyFile(p, to)
		default:
			return fmt.Errorf("%s is not a regular file; an installed skill holds none", p)
		}
	})
	if err != nil {
		return err
	}
	// Folders become read-only last, deepest first, so that the copy
	// above could write into them.
	var dirs []string
	filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i], 0o555); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	mode := os.FileMode(0o444)
	if fi.Mode()&0o111 != 0 {
		mode = 0o555
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(to, mode)
}

// removeTree deletes a placement: a link, or a read-only copy (made
// writable first, for users other than root).
func removeTree(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(q, 0o755)
			}
			return nil
		})
	}
	return os.RemoveAll(p)
}

// mkdirs creates dir and its missing parents, returning those it created
// (outermost first), so that they can be removed with the last placement.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i, j := 0, len(missing)-1; i < j; i, j = i+1, j-1 {
		missing[i], missing[j] = missing[j], missing[i]
	}
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return missing, nil
}
