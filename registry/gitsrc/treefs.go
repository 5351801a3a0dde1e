package gitsrc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/agentskills/agent/internal/ground/copybuf"
	"github.com/agentskills/agent/internal/ground/platform"
)

// TreeFS is a git tree as an io/fs.FS, read straight from the object store:
// nothing is checked out. Symbolic links are reported as such (Lstat,
// ReadDir, ReadLink) and never followed: opening one is an error.
// Submodules (gitlinks) are left out, as a checkout without submodules
// leaves them empty.
//
// A TreeFS from NewTreeFS is safe for concurrent use, so that add stages
// many skills at once: go-git's object storage is not (its pack handles
// and a tree's entry map are shared), so every call into it holds one
// lock. What a file's reader returns is its own: the content is read
// under the lock, and streamed without it.
type TreeFS struct {
	root *object.Tree
	// trees holds the folders decoded so far. go-git's FindEntry caches
	// only paths two or more levels deep, so every lookup under skills/
	// decoded that folder again: O(n²) for n skills side by side.
	trees *treeCache
}

type treeCache struct {
	mu sync.Mutex // held for every call into go-git's storage
	m  map[string]*object.Tree
}

// lock holds the storage's lock until the returned func is called. A
// TreeFS made without NewTreeFS has none: it is used by one goroutine.
func (t TreeFS) lock() func() {
	if t.trees == nil {
		return func() {}
	}
	t.trees.mu.Lock()
	return t.trees.mu.Unlock
}

var (
	_ fs.ReadDirFS  = TreeFS{}
	_ fs.StatFS     = TreeFS{}
	_ fs.ReadLinkFS = TreeFS{}
)

// NewTreeFS wraps a tree.
func NewTreeFS(t *object.Tree) TreeFS {
	return TreeFS{root: t, trees: &treeCache{m: map[string]*object.Tree{}}}
}

// tree returns the folder dir (a valid fs path; "." is the root), decoding
// each folder on its way at most once. The caller holds the lock.
func (t TreeFS) tree(dir string) (*object.Tree, error) {
	if dir == "." {
		return t.root, nil
	}
	if t.trees == nil {
		return t.root.Tree(dir)
	}
	if tr, ok := t.trees.m[dir]; ok {
		return tr, nil
	}
	parent, err := t.tree(path.Dir(dir))
	if err != nil {
		return nil, err
	}
	tr, err := parent.Tree(path.Base(dir))
	if err != nil {
		return nil, err
	}
	t.trees.m[dir] = tr
	return tr, nil
}

// entry finds name's tree entry; the root has none (nil, nil). The caller
// holds the lock.
func (t TreeFS) entry(op, name string) (*object.TreeEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		return nil, nil
	}
	parent, err := t.tree(path.Dir(name))
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	e, err := parent.FindEntry(path.Base(name))
	if err != nil || e.Mode == filemode.Submodule {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

func (t TreeFS) info(name string, e *object.TreeEntry) fs.FileInfo {
	if e == nil {
		return treeInfo{name: ".", mode: fs.ModeDir | 0o755}
	}
	fi := treeInfo{name: path.Base(name)}
	switch e.Mode {
	case filemode.Dir:
		fi.mode = fs.ModeDir | 0o755
	case filemode.Symlink:
		fi.mode = fs.ModeSymlink | 0o777
	case filemode.Executable:
		fi.mode = 0o755
	default:
		fi.mode = 0o644
	}
	if e.Mode != filemode.Dir {
		fi.size = func() int64 {
			defer t.lock()()
			if b, err := t.root.TreeEntryFile(e); err == nil {
				return b.Size
			}
			return 0
		}
	}
	return fi
}

// Open implements fs.FS.
func (t TreeFS) Open(name string) (fs.File, error) {
	defer t.lock()()
	e, err := t.entry("open", name)
	if err != nil {
		return nil, err
	}
	switch {
	case e == nil || e.Mode == filemode.Dir:
		return &treeDir{fs: t, name: name, info: t.info(name, e)}, nil
	case e.Mode == filemode.Symlink:
		return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: a symbolic link (links are not followed)", fs.ErrInvalid)}
	}
	f, err := t.root.TreeEntryFile(e)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	r, err := f.Reader()
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return &treeFile{ReadCloser: r, info: t.info(name, e)}, nil
}

// Stat implements fs.StatFS. Like Lstat, it does not follow links.
func (t TreeFS) Stat(name string) (fs.FileInfo, error) { return t.Lstat(name) }

// Lstat implements fs.ReadLinkFS.
func (t TreeFS) Lstat(name string) (fs.FileInfo, error) {
	defer t.lock()()
	e, err := t.entry("lstat", name)
	if err != nil {
		return nil, err
	}
	return t.info(name, e), nil
}

// ReadLink implements fs.ReadLinkFS.
func (t TreeFS) ReadLink(name string) (string, error) {
	defer t.lock()()
	e, err := t.entry("readlink", name)
	if err != nil {
		return "", err
	}
	if e == nil || e.Mode != filemode.Symlink {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	f, err := t.root.TreeEntryFile(e)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	s, err := f.Contents()
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
	}
	return s, nil
}

// ReadDir implements fs.ReadDirFS, in git's (byte) order, which is sorted.
func (t TreeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	defer t.lock()()
	tree := t.root
	if name != "." {
		e, err := t.entry("readdir", name)
		if err != nil {
			return nil, err
		}
		if e.Mode != filemode.Dir {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: fmt.Errorf("not a directory")}
		}
		if tree, err = t.tree(name); err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: err}
		}
	}
	sub := TreeFS{root: tree, trees: t.trees} // its entries' sizes take the lock
	out := make([]fs.DirEntry, 0, len(tree.Entries))
	for i := range tree.Entries {
		e := &tree.Entries[i]
		if err := checkEntryName(name, e.Name); err != nil {
			return nil, err
		}
		if e.Mode == filemode.Submodule {
			continue
		}
		out = append(out, fs.FileInfoToDirEntry(sub.info(e.Name, e)))
	}
	// Git sorts a directory as if its name ended in '/'; fs wants names.
	sortDirEntries(out)
	return out, nil
}

// pycache is never installed (SPEC §12): bytecode that no hash covers
// and no reviewer reads, which Python would run in place of the source.
const pycache = "__pycache__"

// checkEntryName refuses a name that git itself never writes into a tree
// but a crafted object can hold: "." or ".." would walk a folder again or
// climb out of the checkout, "/" would reach into another folder.
func checkEntryName(dir, name string) error {
	if name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00") {
		return nil
	}
	p := name
	if dir != "." {
		p = dir + "/" + name
	}
	return fmt.Errorf("%w %q at %s: a git tree may not hold the names \".\", \"..\", \"\" or names with \"/\" or NUL; the repository was crafted or is corrupt, so it cannot be installed", ErrUnsafeEntry, name, p)
}

func sortDirEntries(es []fs.DirEntry) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].Name() < es[j-1].Name(); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

type treeInfo struct {
	name string
	mode fs.FileMode
	size func() int64
}

func (i treeInfo) Name() string { return i.name }
func (i treeInfo) Size() int64 {
	if i.size == nil {
		return 0
	}
	return i.size()
}
func (i treeInfo) Mode() fs.FileMode  { return i.mode }
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i treeInfo) Sys() any           { return nil }

type treeFile struct {
	io.ReadCloser
	info fs.FileInfo
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return f.info, nil }

type treeDir struct {
	fs   TreeFS
	name string
	info fs.FileInfo
	ents []fs.DirEntry
	read bool
}

func (d *treeDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *treeDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: fmt.Errorf("is a directory")}
}
func (d *treeDir) Close() error { return nil }

func (d *treeDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.read {
		ents, err := d.fs.ReadDir(d.name)
		if err != nil {
			return nil, err
		}
		d.ents, d.read = ents, true
	}
	if n <= 0 {
		out := d.ents
		d.ents = nil
		return out, nil
	}
	if len(d.ents) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.ents))
	out := d.ents[:n]
	d.ents = d.ents[n:]
	return out, nil
}

// Limits bound what a checkout writes (SPEC §12): a skill's files are
// read into memory by nothing, but a repository that packs a 1 GiB file of
// zeros into a megabyte must not fill the disk either. Zero fields take
// the defaults.
type Limits struct {
	File  int64 // bytes in one file; 0 is DefaultFileLimit
	Skill int64 // bytes in all the files written; 0 is DefaultSkillLimit
}

// Default size limits: far above any skill's scripts and references, far
// below what would hurt a laptop.
const (
	DefaultFileLimit  = 64 << 20
	DefaultSkillLimit = 256 << 20
)

func (l Limits) file() int64 {
	if l.File > 0 {
		return l.File
	}
	return DefaultFileLimit
}

func (l Limits) skill() int64 {
	if l.Skill > 0 {
		return l.Skill
	}
	return DefaultSkillLimit
}

// WriteTree writes the folder dir of fsys (a slash path; "" or "." for
// the root) to dst, which must not exist: regular files with their
// executable bit, folders, and symbolic links as links (CopySkill decides
// later whether a link may stay). A file over lim.File, or files that add
// up to more than lim.Skill, stop it with ErrTooLarge before they are
// read (by their size in the object store) and while they are copied
// (should that size lie).
func WriteTree(fsys fs.FS, dir, dst string, lim Limits) error {
	if dir == "" {
		dir = "."
	}
	var total int64
	return fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := "."
		switch {
		case p == dir:
		case dir == ".":
			rel = p
		default:
			rel = p[len(dir)+1:]
		}
		out := filepath.Join(dst, filepath.FromSlash(rel))
		switch t := d.Type(); {
		case d.IsDir():
			if rel == "." {
				return os.MkdirAll(out, 0o755)
			}
			if d.Name() == ".git" || d.Name() == pycache {
				return fs.SkipDir
			}
			// The walk made its parent, in dst, which did not exist:
			// MkdirAll would stat both first.
			return os.Mkdir(out, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := fs.ReadLink(fsys, p)
			if err != nil {
				return err
			}
			return os.Symlink(target, out)
		case t.IsRegular():
			n, err := writeFile(fsys, p, out, d, lim.file(), lim.skill()-total)
			total += n
			if errors.Is(err, errOverSkill) {
				return fmt.Errorf("%w: the files of %s add up to more than %d bytes (at %s); raise max_skill_size in config.yaml if the skill needs them", ErrTooLarge, dir, lim.skill(), p)
			}
			return err
		}
		return nil
	})
}

// errOverSkill is writeFile's "over what is left of the skill's limit".
var errOverSkill = errors.New("over the skill limit")

// writeFile copies name to out and returns how many bytes it wrote: at
// most fileLimit (else ErrTooLarge) and left (else errOverSkill).
func writeFile(fsys fs.FS, name, out string, d fs.DirEntry, fileLimit, left int64) (int64, error) {
	fi, err := d.Info()
	if err != nil {
		return 0, err
	}
	over := func(size int64) (int64, error) {
		if size > fileLimit {
			return 0, fmt.Errorf("%w: %s is %d bytes, over the limit of %d bytes per file; raise max_file_size in config.yaml if the skill needs it", ErrTooLarge, name, size, fileLimit)
		}
		return 0, errOverSkill
	}
	if size := fi.Size(); size > fileLimit || size > left {
		return over(size)
	}
	in, err := fsys.Open(name)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	limit := min(fileLimit, left)
	n, err := createCopy(out, io.LimitReader(in, limit+1), fi)
	if err == nil && n > limit {
		return over(n)
	}
	return n, err
}

// createCopy creates dst, which must not exist, with what in holds:
// executable (0755) when fi is executable, else 0644. It returns the
// bytes written.
func createCopy(dst string, in io.Reader, fi fs.FileInfo) (int64, error) {
	mode := os.FileMode(0o644)
	if fi != nil && fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	f, err := platform.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return 0, err
	}
	n, err := copybuf.Copy(f, in)
	if err != nil {
		f.Close()
		return n, err
	}
	return n, f.Close()
}
