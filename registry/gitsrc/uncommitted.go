package gitsrc

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
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
	committed, err := treeFiles(s.repo, plumbing.NewHash(s.Commit), dir)
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
	patterns := readIgnore(filepath.Join(s.worktree, ".git", "info", "exclude"), nil)
	for i := 0; i <= len(prefix); i++ {
		patterns = append(patterns, readIgnore(filepath.Join(s.worktree, filepath.Join(prefix[:i]...), ".gitignore"), prefix[:i])...)
	}
	var out []string
	seen := map[string]bool{}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: not ours to report
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." {
			if d.IsDir() {
				patterns = append(patterns, readIgnore(filepath.Join(p, ".gitignore"), prefix)...)
			}
			return nil
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
		b, err := os.ReadFile(p)
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
