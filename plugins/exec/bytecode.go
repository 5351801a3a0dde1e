package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// Bytecode (SPEC §9, §12 "No code runs unhashed"). Python reads a .pyc
// instead of its source when the .pyc's header matches the source, or
// always when the .pyc is "unchecked" (PEP 552), so whoever can write a
// .pyc that a later run looks at runs code that no hash covers. Scripts
// therefore run with PYTHONDONTWRITEBYTECODE=1 and with
// PYTHONPYCACHEPREFIX set to a folder that only the exec plugin writes:
// Python then looks for bytecode there and nowhere else (not in a
// __pycache__ beside the skill's scripts, nor in uv's environments),
// and never writes any. The folder mirrors the interpreter's own
// __pycache__ files as symbolic links, so the standard library loads
// from the interpreter's read-only bytecode as it does outside agent;
// a skill's own modules compile in memory at each run.

// probeSrc asks an interpreter for what the bytecode folder needs. -I
// -S: no user site, no PYTHON* variables, no site-packages and so no
// .pth file runs, outside the sandbox.
const probeSrc = "import json, os, sys; print(json.dumps([os.path.realpath(sys.executable), sys.prefix, sys.base_prefix, sys.implementation.cache_tag or '', sys.path]))"

// pyInfo is what probeSrc prints.
type pyInfo struct {
	exe, prefix, basePrefix, tag string
	path                         []string
}

func probePython(argv0, dir string) (pyInfo, bool) {
	cmd := exec.Command(argv0, "-I", "-S", "-c", probeSrc)
	cmd.Dir = dir
	out, err := cmd.Output()
	var v []json.RawMessage
	if err != nil || json.Unmarshal(out, &v) != nil || len(v) != 5 {
		return pyInfo{}, false
	}
	var in pyInfo
	for i, p := range []*string{&in.exe, &in.prefix, &in.basePrefix, &in.tag} {
		if json.Unmarshal(v[i], p) != nil {
			return pyInfo{}, false
		}
	}
	if json.Unmarshal(v[4], &in.path) != nil || !filepath.IsAbs(in.exe) {
		return pyInfo{}, false
	}
	return in, true
}

// farms are the bytecode folders this process built or found, by key.
var farms sync.Map

// bytecodeFolder returns the bytecode folder for the interpreter in
// (built under root on first use) or, when there is none to build, ""
// (the caller then gives an empty folder of the run's own).
func bytecodeFolder(root string, in pyInfo) string {
	if root == "" || in.tag == "" {
		return ""
	}
	key := farmKey(in)
	if v, ok := farms.Load(root + "\x00" + key); ok {
		return v.(string)
	}
	dir := filepath.Join(root, "bytecode", key)
	if _, err := os.Stat(dir); err != nil {
		if err := buildFarm(dir, in); err != nil {
			return ""
		}
	}
	farms.Store(root+"\x00"+key, dir)
	return dir
}

// farmKey names a farm by the interpreter and its file's identity, so
// an upgraded interpreter gets a new one.
func farmKey(in pyInfo) string {
	h := sha256.New()
	h.Write([]byte(in.exe + "\x00" + in.basePrefix + "\x00" + in.tag + "\x00" + strings.Join(in.path, "\x00")))
	if fi, err := os.Stat(in.exe); err == nil {
		h.Write([]byte(fi.ModTime().String() + "\x00" + fi.Name()))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// buildFarm links, under dir, every bytecode file of the interpreter's
// own search path (the folders under its base prefix, which scripts may
// only read) where Python looks for it with the prefix set:
// D/__pycache__/m.TAG.pyc is found as dir/D/m.TAG.pyc. A folder D with
// no subfolders but __pycache__ becomes one link, dir/D ->
// D/__pycache__; others get a link per file. It is built in a temp
// folder and renamed into place, so a run never sees half of it.
func buildFarm(dir string, in pyInfo) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	base := filepath.Clean(in.basePrefix)
	tag := "." + in.tag + "."
	done := map[string]bool{}
	for _, d := range in.path {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || !within(d, base) {
			continue
		}
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.IsDir() || e.Name() == "__pycache__" || done[p] {
				return nil
			}
			if skipFarm[e.Name()] && p != d {
				return filepath.SkipDir
			}
			done[p] = true
			return linkBytecode(tmp, p, tag)
		})
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			return err
		}
		// Another process renamed its farm into place first.
	}
	return nil
}

// skipFarm are folders the farm leaves out: installed packages (many,
// and mostly not what scripts import) and the standard library's own
// tests. Their modules compile in memory, as a skill's do.
var skipFarm = map[string]bool{"site-packages": true, "dist-packages": true, "test": true, "tests": true, "idlelib": true, "turtledemo": true}

// linkBytecode links src's __pycache__ files into the farm at tmp.
func linkBytecode(tmp, src, tag string) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil
	}
	leaf, cached := true, false
	for _, e := range ents {
		switch {
		case e.Name() == "__pycache__" && e.IsDir():
			cached = true
		case e.IsDir():
			leaf = false
		}
	}
	if !cached {
		return nil
	}
	pyc := filepath.Join(src, "__pycache__")
	at := filepath.Join(tmp, src)
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	if leaf {
		return os.Symlink(pyc, at)
	}
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	files, err := os.ReadDir(pyc)
	if err != nil {
		return nil
	}
	for _, f := range files {
		if f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".pyc") && strings.Contains(f.Name(), tag) {
			if err := os.Symlink(filepath.Join(pyc, f.Name()), filepath.Join(at, f.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
