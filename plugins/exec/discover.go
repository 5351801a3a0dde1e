package exec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/agentskills/agent/internal/ground/platform"
)

// Sentinel errors of discovery and name resolution.
var (
	ErrNotFound    = errors.New("script not found")
	ErrInvalidName = errors.New("invalid script name")
	ErrRejected    = errors.New("script rejected")
)

// maxScriptSize bounds how much of a script is read to find its metadata.
const maxScriptSize = 16 << 20

// Script is one runnable script of a skill. Err is set when the script was
// rejected (a symbolic link, a path leaving the skill) or its PEP 723 block
// is malformed; the error concerns that script only.
type Script struct {
	Name string    // file name without ".py", as the file spells it
	Path string    // absolute path
	Meta *Metadata // nil when the script declares nothing
	Err  error
}

// MarshalJSON flattens the metadata so `agent skill info --json` shows
// {name, path, requires_python, dependencies, error}.
func (s Script) MarshalJSON() ([]byte, error) {
	v := struct {
		Name           string   `json:"name"`
		Path           string   `json:"path"`
		RequiresPython string   `json:"requires_python,omitempty"`
		Dependencies   []string `json:"dependencies,omitempty"`
		Error          string   `json:"error,omitempty"`
	}{Name: s.Name, Path: s.Path}
	if s.Meta != nil {
		v.RequiresPython, v.Dependencies = s.Meta.RequiresPython, s.Meta.Dependencies
	}
	if s.Err != nil {
		v.Error = s.Err.Error()
	}
	return json.Marshal(v)
}

// Discover lists a skill's scripts: the explicit scripts list when it is not
// empty (entries are names inside scripts/, with or without ".py", or
// slash-separated paths inside the skill), otherwise scripts/*.py. Files whose
// base name or relative path matches an ignore glob are left out, as are dot
// files and directories. Symbolic links and paths leaving the skill come back
// with Err wrapping ErrRejected rather than being followed. Each script's
// PEP 723 block is parsed; a malformed one sets that script's Err.
//
// The error result is for problems with the skill as a whole (an unreadable
// scripts folder, a bad glob). A skill without scripts/ has no scripts.
func Discover(dir string, scripts, ignore []string) ([]Script, error) {
	list, err := List(dir, scripts, ignore)
	if err != nil {
		return nil, err
	}
	for i := range list {
		if list[i].Err != nil {
			continue
		}
		src, err := readScript(list[i].Path)
		if err != nil {
			list[i].Err = err
			continue
		}
		list[i].Meta, list[i].Err = ParseMetadata(src)
		if list[i].Err != nil {
			list[i].Err = fmt.Errorf("%s: %w", list[i].Path, list[i].Err)
		}
	}
	return list, nil
}

// List is Discover without reading the files: Meta stays nil. It is what
// script_run needs to resolve one name cheaply, and what the host uses to
// decide whether a skill has scripts without reading any script source.
func List(dir string, scripts, ignore []string) ([]Script, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("discover scripts in %s: %w", dir, err)
	}
	for _, g := range ignore {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("discover scripts in %s: scripts_ignore pattern %q: %w", dir, g, err)
		}
	}
	var out []Script
	if len(scripts) == 0 {
		entries, err := os.ReadDir(filepath.Join(abs, "scripts"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("discover scripts in %s: %w", dir, err)
		}
		if err := checkNoLink(abs, "scripts"); err != nil {
			return nil, fmt.Errorf("discover scripts in %s: %w", dir, err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || !strings.EqualFold(path.Ext(name), ".py") || e.IsDir() {
				continue
			}
			rel := "scripts/" + name
			if ignored(ignore, rel) {
				continue
			}
			s := Script{Name: name[:len(name)-3], Path: filepath.Join(abs, "scripts", name)}
			if e.Type()&fs.ModeSymlink != 0 {
				s.Err = fmt.Errorf("%w: %s is a symbolic link; replace it with a regular file", ErrRejected, rel)
			} else if !e.Type().IsRegular() {
				continue
			}
			out = append(out, s)
		}
	} else {
		seen := map[string]bool{}
		for _, entry := range scripts {
			s, rel, err := explicit(abs, entry)
			if err == nil && ignored(ignore, rel) {
				continue
			}
			if err != nil {
				s.Err = err
			}
			key := strings.ToLower(s.Path)
			if s.Path == "" {
				key = "\x00" + entry
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// explicit resolves one entry of the manifest's scripts list.
func explicit(abs, entry string) (Script, string, error) {
	rel := entry
	if !strings.Contains(entry, "/") {
		rel = "scripts/" + entry
	}
	if !strings.EqualFold(path.Ext(rel), ".py") {
		rel += ".py"
	}
	base := path.Base(rel)
	s := Script{Name: base[:len(base)-3], Path: filepath.Join(abs, filepath.FromSlash(rel))}
	if entry == "" || strings.ContainsAny(entry, "\\\x00") || path.IsAbs(rel) || path.Clean(rel) != rel ||
		rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "/../") {
		// Keep the entry as written: there is no path to show.
		return Script{Name: entry}, rel, fmt.Errorf("%w: scripts entry %q must name a file inside the skill, like \"status\" or \"tools/run.py\"", ErrRejected, entry)
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return Script{Name: entry}, rel, fmt.Errorf("%w: scripts entry %q names a hidden file or folder", ErrRejected, entry)
		}
	}
	if err := checkNoLink(abs, rel); errors.Is(err, ErrNotFound) {
		// Names are case-insensitive: "Status" in SKILL.md finds status.py.
		dir, file := path.Split(rel)
		if entries, derr := os.ReadDir(filepath.Join(abs, filepath.FromSlash(dir))); derr == nil {
			for _, e := range entries {
				if strings.EqualFold(e.Name(), file) {
					rel = dir + e.Name()
					s.Name, s.Path = e.Name()[:len(e.Name())-3], filepath.Join(abs, filepath.FromSlash(rel))
					return s, rel, checkNoLink(abs, rel)
				}
			}
		}
		return s, rel, err
	} else if err != nil {
		return s, rel, err
	}
	return s, rel, nil
}

// checkNoLink walks rel from abs with Lstat so that no component is a
// symbolic link: nothing outside the skill is ever reached. The last
// component must be a regular file when it is a script.
func checkNoLink(abs, rel string) error {
	cur := abs
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s does not exist; fix the scripts list in SKILL.md", ErrNotFound, rel)
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrRejected, rel, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%w: %s is a symbolic link; replace it with a regular file", ErrRejected, path.Join(parts[:i+1]...))
		}
		last := i == len(parts)-1
		if !last && !fi.IsDir() {
			return fmt.Errorf("%w: %s is not a folder", ErrNotFound, path.Join(parts[:i+1]...))
		}
		if last && strings.HasSuffix(strings.ToLower(part), ".py") && !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is not a regular file", ErrRejected, rel)
		}
	}
	return nil
}

func ignored(globs []string, rel string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, path.Base(rel)); ok {
			return true
		}
		if ok, _ := path.Match(g, rel); ok {
			return true
		}
	}
	return false
}

// checkName validates a script name given by a caller (a model, a user).
func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: the script name is empty; use a name from script_list", ErrInvalidName)
	case len(name) > 255:
		return fmt.Errorf("%w: the script name is longer than 255 bytes", ErrInvalidName)
	case strings.ContainsAny(name, "/\\") || strings.Contains(name, ".."):
		return fmt.Errorf("%w: %q: a script name is a plain name like \"status\", without folders or \"..\"", ErrInvalidName, name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("%w: %q: script names do not start with a dot", ErrInvalidName, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %q contains a control character", ErrInvalidName, name)
		}
	}
	return nil
}

// find resolves a caller's name case-insensitively, with or without ".py":
// Status, status and status.py all mean status.py. An exact spelling wins
// over a case-insensitive one.
func find(list []Script, name string) (Script, error) {
	if err := checkName(name); err != nil {
		return Script{}, err
	}
	want := name
	if strings.EqualFold(path.Ext(want), ".py") {
		want = want[:len(want)-3]
	}
	var matches []Script
	for _, s := range list {
		if s.Name == want {
			return s, nil
		}
		if strings.EqualFold(s.Name, want) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		names := make([]string, 0, len(list))
		for _, s := range list {
			if s.Err == nil || !errors.Is(s.Err, ErrRejected) {
				names = append(names, s.Name)
			}
		}
		avail := "this skill has no scripts"
		if len(names) > 0 {
			avail = "available: " + strings.Join(names, ", ")
		}
		return Script{}, fmt.Errorf("%w: no script named %q (%s)", ErrNotFound, name, avail)
	case 1:
		return matches[0], nil
	default:
		return Script{}, fmt.Errorf("%w: %q matches several scripts that differ only in case; use the exact spelling", ErrInvalidName, name)
	}
}

// readScript reads a script without following a symbolic link, bounded.
func readScript(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|platform.NoFollow|platform.NonBlock, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symbolic link; replace it with a regular file", ErrRejected, p)
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, p)
		}
		return nil, fmt.Errorf("read script %s: %w", p, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read script %s: %w", p, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrRejected, p)
	}
	if fi.Size() > maxScriptSize {
		return nil, fmt.Errorf("%w: %s is larger than %d MiB", ErrRejected, p, maxScriptSize>>20)
	}
	return io.ReadAll(io.LimitReader(f, maxScriptSize+1))
}
