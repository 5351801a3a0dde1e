package registry

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// SearchPatterns are where skills are looked for inside a repository.
var SearchPatterns = []string{"SKILL.md", "*/SKILL.md", "skills/*/SKILL.md", "plugins/*/skills/*/SKILL.md"}

// Found is one skill found in a repository.
type Found struct {
	Dir      string    // slash path relative to the repository root; "" for the root
	Manifest *Manifest // nil when Err is set
	Warnings []Problem
	Err      error // why the SKILL.md cannot be used
}

// Name is the skill's manifest name, or its folder name if the manifest is
// unusable.
func (f Found) Name() string {
	if f.Manifest != nil {
		return f.Manifest.Name
	}
	return f.folder()
}

func (f Found) folder() string {
	if f.Dir == "" {
		return "."
	}
	return path.Base(f.Dir)
}

func (f Found) String() string {
	d := f.Dir
	if d == "" {
		d = "."
	}
	if f.Err != nil {
		return fmt.Sprintf("%s (%s, invalid)", f.Name(), d)
	}
	return fmt.Sprintf("%s (%s)", f.Name(), d)
}

// Discover finds the skills in a checked-out repository at SearchPatterns.
// Symbolic links are never followed: a linked folder is skipped and a linked
// SKILL.md is reported as invalid.
func Discover(root string) ([]Found, error) {
	var dirs []string
	dirs = append(dirs, "")
	top, err := realSubdirs(root, "")
	if err != nil {
		return nil, fmt.Errorf("discover skills in %s: %w", root, err)
	}
	dirs = append(dirs, top...)
	if sk, _ := realSubdirs(root, "skills"); len(sk) > 0 {
		dirs = append(dirs, sk...)
	}
	plugins, _ := realSubdirs(root, "plugins")
	for _, p := range plugins {
		sk, _ := realSubdirs(root, p+"/skills")
		dirs = append(dirs, sk...)
	}
	seen := map[string]bool{}
	var out []Found
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		file := filepath.Join(root, filepath.FromSlash(d), ManifestFile)
		fi, err := os.Lstat(file)
		if err != nil {
			continue
		}
		f := Found{Dir: d}
		if !fi.Mode().IsRegular() {
			f.Err = &ManifestError{Problems: []Problem{{File: path.Join(d, ManifestFile), Message: "SKILL.md is a symbolic link or not a regular file; links are refused, commit the real file"}}}
			out = append(out, f)
			continue
		}
		f.Manifest, f.Warnings, f.Err = loadManifestAs(filepath.Join(root, filepath.FromSlash(d)), path.Join(d, ManifestFile))
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// DiscoverFor is Discover plus, when selector is a folder path inside the
// repository (it contains a slash), the skill at that path even if it sits
// outside SearchPatterns, such as examples/skills/hello.
func DiscoverFor(root, selector string) ([]Found, error) {
	found, err := Discover(root)
	if err != nil || !strings.Contains(strings.Trim(selector, "/"), "/") {
		return found, err
	}
	rel := path.Clean(strings.Trim(selector, "/"))
	for _, f := range found {
		if f.Dir == rel {
			return found, nil
		}
	}
	if err := realDir(root, rel); err != nil {
		return found, nil // pick reports that nothing matched
	}
	dir := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(filepath.Join(dir, ManifestFile))
	if err != nil {
		return found, nil
	}
	f := Found{Dir: rel}
	if !fi.Mode().IsRegular() {
		f.Err = &ManifestError{Problems: []Problem{{File: path.Join(rel, ManifestFile), Message: "SKILL.md is a symbolic link or not a regular file; links are refused, commit the real file"}}}
	} else {
		f.Manifest, f.Warnings, f.Err = loadManifestAs(dir, path.Join(rel, ManifestFile))
	}
	return append(found, f), nil
}

// loadManifestAs loads dir/SKILL.md but names it display in messages, so
// that errors show the path inside the repository rather than a temp dir.
func loadManifestAs(dir, display string) (*Manifest, []Problem, error) {
	m, warns, err := LoadManifest(dir)
	rename := func(ps []Problem) {
		for i := range ps {
			ps[i].File = display
		}
	}
	rename(warns)
	var me *ManifestError
	if errors.As(err, &me) {
		rename(me.Problems)
	}
	return m, warns, err
}

// realSubdirs lists rel's subdirectories (as slash paths from root) that are
// real directories, not links, skipping hidden ones such as .git.
func realSubdirs(root, rel string) ([]string, error) {
	if rel != "" {
		if err := realDir(root, rel); err != nil {
			return nil, err
		}
	}
	ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, path.Join(rel, e.Name()))
		}
	}
	return out, nil
}

// realDir checks that every component of rel under root is a real
// directory, so that a path can never leave root through a link.
func realDir(root, rel string) error {
	if !insideRel(rel) && rel != "" {
		return fmt.Errorf("%s: path leaves the repository", rel)
	}
	cur := root
	for _, part := range strings.Split(path.Clean(rel), "/") {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory (symbolic links are not followed)", rel)
		}
	}
	return nil
}

// pick chooses the skill the [skill] selector names, or the only one.
func pick(found []Found, selector, source string) (Found, error) {
	list := func() string {
		var s []string
		for _, f := range found {
			s = append(s, f.String())
		}
		return strings.Join(s, ", ")
	}
	if len(found) == 0 {
		return Found{}, fmt.Errorf("%w in %s: looked at %s; a skill needs a SKILL.md in one of those places", ErrNoSkill, source, strings.Join(SearchPatterns, ", "))
	}
	if selector == "" {
		if len(found) == 1 {
			return found[0], found[0].Err
		}
		return Found{}, fmt.Errorf("%w in %s: %s; pick one: agent skill add %s <skill>", ErrAmbiguousSkill, source, list(), source)
	}
	want, err := Canonical(path.Base(strings.Trim(selector, "/")))
	if err != nil {
		return Found{}, fmt.Errorf("select skill %q: %w", selector, err)
	}
	var matches []Found
	for _, f := range found {
		if f.Dir == strings.Trim(selector, "/") || canonicalOr(f.folder()) == want ||
			(f.Manifest != nil && canonicalOr(f.Manifest.Name) == want) {
			matches = append(matches, f)
		}
	}
	switch len(matches) {
	case 0:
		return Found{}, fmt.Errorf("%w named %q in %s; found: %s", ErrNoSkill, selector, source, list())
	case 1:
		return matches[0], matches[0].Err
	}
	var s []string
	for _, f := range matches {
		s = append(s, f.String())
	}
	return Found{}, fmt.Errorf("%w: %q matches %s in %s; give the folder path instead, for example %s", ErrAmbiguousSkill, selector, strings.Join(s, ", "), source, matches[0].Dir)
}

func canonicalOr(name string) string {
	c, err := Canonical(name)
	if err != nil {
		return "\x00" + name
	}
	return c
}

// copySkill copies the skill folder src to dst (which must not exist),
// leaving out .git. A symbolic link is kept only when it is relative and
// stays inside src; any other link is an error, because the installed skill
// must not reach outside itself.
func copySkill(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.Name() == ".git" && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			joined := filepath.Join(filepath.Dir(rel), target)
			if filepath.IsAbs(target) || !insideRel(filepath.ToSlash(joined)) {
				return fmt.Errorf("copy skill: %s is a symbolic link to %s, outside the skill; replace it with the file", filepath.ToSlash(rel), target)
			}
			return os.Symlink(target, out)
		case t.IsRegular():
			return copyFile(p, out)
		}
		return nil // sockets, devices: git cannot hold them
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi.Mode()&0o111 != 0 {
		mode = 0o755
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
