package gitsrc

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// maxUncommittedFiles bounds the walk of Uncommitted: it answers a
// courtesy question, and a skill folder is small.
const maxUncommittedFiles = 5000

// Uncommitted lists the files of the skill folder dir (a slash path in the
// repository) that differ in the working tree from the commit this
// snapshot holds: changed, deleted, or new and not ignored, each as a
// slash path relative to dir and marked "(deleted)" or "(new)" when so.
// It is empty unless the snapshot is the checked-out HEAD of a local
// repository with a working tree: what `agent skill add ./repo` installs
// is the commit, and an author who has just edited SKILL.md should be
// told that the edit is not in it.
func (s *Snapshot) Uncommitted(dir string) ([]string, error) {
	if s == nil || s.repo == nil || s.worktree == "" {
		return nil, nil
	}
	lt := s.local
	// The commit's folders come from the snapshot's TreeFS, which has
	// read them already (discovery, the checkout) and whose lock lets add
	// check many folders at once.
	t, ok := s.FS.(TreeFS)
	if !ok {
		return nil, nil
	}
	unlock := t.lock()
	tree, err := t.tree(FSPath(dir))
	var committed map[string]plumbing.Hash
	if err == nil {
		committed, err = filesOf(tree)
	}
	unlock()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(s.worktree, filepath.FromSlash(dir))
	var prefix []string
	if dir != "" && dir != "." {
		prefix = strings.Split(dir, "/")
	}
	// .gitignore files from the repository root down to the skill folder,
	// and .git/info/exclude; those inside the folder are read as the walk
	// enters each directory.
	// A copy: the cached slices are shared by every folder's check.
	patterns := slices.Clone(lt.readIgnore(filepath.Join(s.worktree, ".git", "info", "exclude"), nil))
	for i := 0; i <= len(prefix); i++ {
		patterns = append(patterns, lt.readIgnore(filepath.Join(s.worktree, filepath.Join(prefix[:i]...), ".gitignore"), prefix[:i])...)
	}
	staged, indexTime := lt.stage(s.worktree)
	var out []string
	seen := map[string]bool{}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: not ours to report
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			return nil // the folder's own .gitignore is read above
		}
		slash := filepath.ToSlash(rel)
		parts := append(append([]string(nil), prefix...), strings.Split(slash, "/")...)
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == pycache || gitignore.NewMatcher(patterns).Match(parts, true) {
				return filepath.SkipDir
			}
			patterns = append(patterns, readIgnore(filepath.Join(p, ".gitignore"), parts)...)
			return nil
		}
		if n++; n > maxUncommittedFiles {
			return filepath.SkipAll
		}
		if !d.Type().IsRegular() {
			return nil
		}
		want, tracked := committed[slash]
		seen[slash] = true
		if !tracked {
			if !gitignore.NewMatcher(patterns).Match(parts, false) {
				out = append(out, slash+" (new)")
			}
			return nil
		}
		if f, ok := staged[path.Join(dir, slash)]; ok && f.hash == want {
			// git's stat cache: the file is as the index saw it (size,
			// mtime, ctime), and the index holds the committed blob. A
			// file changed in the instant the index was written ("racily
			// clean") is read, as git does.
			if fi, err := d.Info(); err == nil && uint32(fi.Size()) == f.size && fi.ModTime().Equal(f.mtime) && f.mtime.Before(indexTime) {
				if ctime, ok := changeTime(fi); ok && ctime.Equal(f.ctime) {
					return nil
				}
			}
		}
		b, err := lt.readFile(p)
		if err != nil {
			return nil
		}
		if plumbing.ComputeHash(plumbing.BlobObject, b) != want {
			out = append(out, slash)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n <= maxUncommittedFiles {
		for f := range committed {
			if !seen[f] && !strings.Contains("/"+f+"/", "/"+pycache+"/") {
				if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); os.IsNotExist(err) {
					out = append(out, f+" (deleted)")
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// localTree is what the Uncommitted checks of one snapshot's skill
// folders share, read once for `add --all` of many: git's index (its stat
// cache) and the ignore files above the folders.
type localTree struct {
	once      sync.Once
	staged    map[string]stagedFile // by slash path; nil without a usable index
	indexTime time.Time

	mu     sync.Mutex
	ignore map[string][]gitignore.Pattern // by file

	read func(string) ([]byte, error) // os.ReadFile unless a test counts
}

func (lt *localTree) readFile(p string) ([]byte, error) {
	if lt.read != nil {
		return lt.read(p)
	}
	return os.ReadFile(p)
}

// stagedFile is a file as git's index last saw it.
type stagedFile struct {
	hash  plumbing.Hash
	size  uint32 // the index keeps the low 32 bits
	mtime time.Time
	ctime time.Time
}

// stage reads the worktree's git index once; an index go-git cannot read
// only means that every tracked file is read and hashed.
func (lt *localTree) stage(worktree string) (map[string]stagedFile, time.Time) {
	lt.once.Do(func() {
		f, err := os.Open(filepath.Join(worktree, ".git", "index"))
		if err != nil {
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return
		}
		var idx index.Index
		if err := index.NewDecoder(bufio.NewReader(f)).Decode(&idx); err != nil {
			return
		}
		lt.staged = make(map[string]stagedFile, len(idx.Entries))
		for _, e := range idx.Entries {
			// Stage 0 is an entry without a conflict (go-git's
			// index.Merged is 1, the conflict's base).
			if e.Stage == 0 && !e.SkipWorktree && !e.IntentToAdd {
				lt.staged[e.Name] = stagedFile{hash: e.Hash, size: e.Size, mtime: e.ModifiedAt, ctime: e.CreatedAt}
			}
		}
		lt.indexTime = fi.ModTime()
	})
	return lt.staged, lt.indexTime
}

// readIgnore parses one .gitignore (or info/exclude) file, its patterns
// scoped to domain; a missing file has none. Each file is read once.
func (lt *localTree) readIgnore(file string, domain []string) []gitignore.Pattern {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if ps, ok := lt.ignore[file]; ok {
		return ps
	}
	ps := readIgnore(file, domain)
	ps = ps[:len(ps):len(ps)] // callers append to it
	if lt.ignore == nil {
		lt.ignore = map[string][]gitignore.Pattern{}
	}
	lt.ignore[file] = ps
	return ps
}

// readIgnore parses one .gitignore (or info/exclude) file, its patterns
// scoped to domain; a missing file has none.
func readIgnore(file string, domain []string) []gitignore.Pattern {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, append([]string(nil), domain...)))
	}
	return ps
}
