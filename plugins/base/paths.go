package base

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/sdk"
)

// stateDir is the workspace's own state folder (todos); listings hide it.
const stateDir = ".agent"

// fsys is one call's view of the workspace: an os.Root that every file
// tool goes through, so `..`, absolute paths and symbolic links cannot
// lead out, plus the AGENT_HOME check that os.Root cannot do.
type fsys struct {
	root *os.Root
	dir  string // the root as configured, cleaned and absolute
	real string // dir with symbolic links resolved
	// homeReal is AGENT_HOME with links resolved, "" when unset; homeRel
	// is its path relative to real when the workspace holds it.
	homeReal, homeRel string
	escape            error // os.Root's "path escapes" error value
}

// openFS opens the workspace root. It is cheap (one open and a few
// lstats), so every call gets a fresh one and never holds a directory
// that was since replaced.
func openFS(dir, home string) (*fsys, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, errorf(CodeNotFound, "workspace %s: %v; set AGENT_WORKSPACE to an existing folder", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, errorf(CodeNotFound, "workspace %s does not exist; set AGENT_WORKSPACE to an existing folder", abs)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, errorf(CodeNotFound, "workspace %s cannot be opened: %v; set AGENT_WORKSPACE to an existing folder", abs, err)
	}
	w := &fsys{root: root, dir: filepath.Clean(abs), real: real}
	// os.Root does not export its escape error; take it from the root
	// itself so errors.Is recognises it whatever its wording.
	if _, err := root.Lstat(".."); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			w.escape = pe.Err
		}
	}
	if home != "" {
		h, err := filepath.Abs(home)
		if err == nil {
			if r, err := filepath.EvalSymlinks(h); err == nil {
				h = r
			}
			w.homeReal = filepath.Clean(h)
			if rel, ok := within(w.real, w.homeReal); ok {
				w.homeRel = rel
			}
		}
	}
	return w, nil
}

func (w *fsys) Close() { w.root.Close() }

// within returns p relative to dir when p is dir or beneath it.
func within(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	if dir == "/" {
		return strings.TrimPrefix(p, "/"), true
	}
	if strings.HasPrefix(p, dir+"/") {
		return p[len(dir)+1:], true
	}
	return "", false
}

// rel turns a caller's path (relative to the workspace, or absolute inside
// it) into a clean relative path, refusing what is plainly outside. What is
// not plain (links) is left to os.Root and checkFile.
func (w *fsys) rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", errorf(CodeInvalidArgs, "path %q contains a NUL byte; pass a plain path inside the workspace", p)
	}
	if p == "" {
		p = "."
	}
	// The lexical checks below only give plain mistakes a clear message.
	// What is returned keeps its `..` components: os.Root resolves them
	// after the links before them, as the kernel does, so that
	// "link/../x" means what it means to a shell.
	raw := p
	if filepath.IsAbs(p) {
		c := filepath.Clean(p)
		r, ok := within(w.dir, c)
		if !ok {
			if r, ok = within(w.real, c); !ok {
				return "", w.outside(p)
			}
		}
		raw = r
		for _, d := range []string{w.dir, w.real} {
			if rest, ok := strings.CutPrefix(p, d+"/"); ok && d != "/" {
				raw = rest
				break
			}
		}
	}
	clean := filepath.Clean(raw)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", w.outside(p)
	}
	if w.inHomeRel(clean) {
		return "", w.homeRefused(p)
	}
	if clean == "." {
		return ".", nil
	}
	return raw, nil
}

func (w *fsys) inHomeRel(r string) bool {
	if w.homeRel == "" {
		return false
	}
	_, ok := within(w.homeRel, r)
	return ok || w.homeRel == "."
}

func (w *fsys) outside(p string) error {
	return errorf(CodePathOutside, "%s is outside the workspace %s; use a path relative to it (symbolic links must be relative and stay inside)", p, w.dir)
}

func (w *fsys) homeRefused(p string) error {
	return errorf(CodePathOutside, "%s is inside AGENT_HOME (%s), which the base tools never read or write; work on files elsewhere in the workspace", p, w.homeReal)
}

// realPath is where the kernel says an open file is.
func realPath(f *os.File) (string, bool) {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// checkFile refuses an open file or folder that lies inside AGENT_HOME,
// whatever links led to it. The check is on the open descriptor, so a
// link swapped after it cannot change what is read or written.
func (w *fsys) checkFile(f *os.File, shown string) error {
	if w.homeReal == "" {
		return nil
	}
	p, ok := realPath(f)
	if !ok {
		return nil
	}
	if _, in := within(w.homeReal, p); in {
		return w.homeRefused(shown)
	}
	return nil
}

// fail maps a file-system error on shown to a tool error.
func (w *fsys) fail(shown string, err error) error {
	var pe *fs.PathError
	inner := err
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	switch {
	case w.escape != nil && errors.Is(inner, w.escape):
		return w.outside(shown)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return errorf(CodeNotFound, "%s does not exist; use list_dir or grep_files to find the right path", shown)
	case errors.Is(err, syscall.ELOOP):
		return errorf(CodePathOutside, "%s: too many levels of symbolic links; use the file's real path inside the workspace", shown)
	case errors.Is(err, fs.ErrPermission):
		return errorf(CodePermissionDenied, "%s: permission denied; the file's mode does not allow this", shown)
	case errors.Is(err, syscall.EINVAL):
		return errorf(CodeInvalidArgs, "%s is not a valid path; pass a plain path inside the workspace", shown)
	}
	return fmt.Errorf("%s: %w", shown, err)
}

// open opens a path for reading after both checks.
func (w *fsys) open(p string) (*os.File, string, error) {
	r, err := w.rel(p)
	if err != nil {
		return nil, "", err
	}
	f, err := w.root.Open(r)
	if err != nil {
		return nil, "", w.fail(p, err)
	}
	if err := w.checkFile(f, p); err != nil {
		f.Close()
		return nil, "", err
	}
	return f, r, nil
}

// openFile opens an existing regular file for reading.
func (w *fsys) openFile(p string) (*os.File, fs.FileInfo, error) {
	if p == "" {
		return nil, nil, errorf(CodeInvalidArgs, "path is empty; pass a file path relative to the workspace")
	}
	f, _, err := w.open(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, w.fail(p, err)
	}
	if fi.IsDir() {
		f.Close()
		return nil, nil, errorf(CodeNotFound, "%s is a folder, not a file; use list_dir to see what it holds", p)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errorf(CodeNotText, "%s is not a regular file (%s); only regular files can be read", p, fi.Mode().Type())
	}
	return f, fi, nil
}

// readAll reads a whole regular file of at most max bytes.
func (w *fsys) readAll(p string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := w.openFile(p)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, nil, errorf(CodeTooLarge, "%s is %d bytes, over the %d-byte limit of this tool; use read_file with offset and limit, or exec a tool such as sed", p, fi.Size(), max)
	}
	data := make([]byte, fi.Size())
	n, err := io.ReadFull(f, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil, w.fail(p, err)
	}
	return data[:n], fi, nil
}

// parentDir opens the folder that holds rel (creating it when create is
// set) as a Root of its own, after the AGENT_HOME check on the open
// folder. Every change to rel's name then happens in that one folder, so
// a link swapped meanwhile cannot move the change elsewhere.
func (w *fsys) parentDir(rel, shown string, create bool) (*os.Root, string, error) {
	dir, name := filepath.Split(strings.TrimRight(rel, "/"))
	if dir = strings.TrimRight(dir, "/"); dir == "" {
		dir = "."
	}
	if name == "" || name == "." || name == ".." {
		return nil, "", errorf(CodeInvalidArgs, "%s names a folder, not a file; pass a file path", shown)
	}
	if create && dir != "." {
		// Check the deepest folder that exists before creating any.
		for p := dir; ; p = filepath.Dir(p) {
			f, err := w.root.Open(p)
			if err == nil {
				err = w.checkFile(f, shown)
				f.Close()
				if err != nil {
					return nil, "", err
				}
				break
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, "", w.fail(shown, err)
			}
			if p == "." {
				break
			}
		}
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return nil, "", w.fail(shown, err)
		}
	}
	d, err := w.root.OpenRoot(dir)
	if err != nil {
		return nil, "", w.fail(shown, err)
	}
	f, err := d.Open(".")
	if err != nil {
		d.Close()
		return nil, "", w.fail(shown, err)
	}
	err = w.checkFile(f, shown)
	f.Close()
	if err != nil {
		d.Close()
		return nil, "", err
	}
	return d, name, nil
}

// resolveLinks follows a final symbolic link of rel (a relative one; an
// absolute one is refused as os.Root refuses it), so that writing to a
// link writes the file it names, inside the workspace.
func (w *fsys) resolveLinks(rel, shown string) (string, error) {
	for range 16 {
		fi, err := w.root.Lstat(rel)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return rel, nil
		}
		target, err := w.root.Readlink(rel)
		if err != nil {
			return "", w.fail(shown, err)
		}
		if filepath.IsAbs(target) {
			return "", w.outside(shown)
		}
		next := filepath.Join(filepath.Dir(rel), target)
		if next == ".." || strings.HasPrefix(next, "../") {
			return "", w.outside(shown)
		}
		if w.inHomeRel(next) {
			return "", w.homeRefused(shown)
		}
		rel = next
	}
	return "", errorf(CodePathOutside, "%s: too many levels of symbolic links; use the file's real path inside the workspace", shown)
}

// writeFile replaces p's content atomically (a temporary file renamed over
// it), keeping an existing file's mode. It reports whether p was created.
func (w *fsys) writeFile(p string, data []byte) (bool, error) {
	return w.writeFileMode(p, data, 0o644)
}

// writeFileMode is writeFile with the mode a new file gets.
func (w *fsys) writeFileMode(p string, data []byte, perm fs.FileMode) (bool, error) {
	r, err := w.rel(p)
	if err != nil {
		return false, err
	}
	if r == "." {
		return false, errorf(CodeInvalidArgs, "%s is the workspace folder itself; pass a file path", p)
	}
	if r, err = w.resolveLinks(r, p); err != nil {
		return false, err
	}
	d, name, err := w.parentDir(r, p, true)
	if err != nil {
		return false, err
	}
	defer d.Close()
	mode := perm
	created := true
	if fi, err := d.Lstat(name); err == nil {
		if fi.IsDir() {
			return false, errorf(CodeInvalidArgs, "%s is a folder; pass a file path", p)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return false, w.outside(p) // a link that resolveLinks did not follow: swapped meanwhile
		}
		mode, created = fi.Mode().Perm(), false
	}
	if err := atomicfile.WriteIn(d, name, data, mode, atomicfile.Umask()); err != nil {
		return false, w.fail(p, err)
	}
	return created, nil
}

// remove deletes the file p (a link itself, never what it names).
func (w *fsys) remove(p string) error {
	r, err := w.rel(p)
	if err != nil {
		return err
	}
	d, name, err := w.parentDir(r, p, false)
	if err != nil {
		return err
	}
	defer d.Close()
	fi, err := d.Lstat(name)
	if err != nil {
		return w.fail(p, err)
	}
	if fi.IsDir() {
		return errorf(CodeInvalidArgs, "%s is a folder; apply_patch deletes files only", p)
	}
	if err := d.Remove(name); err != nil {
		return w.fail(p, err)
	}
	return nil
}

// codeOf is the tool error code of err, "" for other errors.
func codeOf(err error) string {
	var e *sdk.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
