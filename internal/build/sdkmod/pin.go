package sdkmod

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// Examples are this repository's plugin modules that require the SDK like
// any author's plugin; Pin keeps their requirement at the current version.
var Examples = []string{"examples/skills/hello-extended/plugin"}

// Pin sets every example module under root to require the SDK at b's
// version, with go.sum lines to match, and points go.work's replace lines
// for that version (and the placeholder v0.0.0) at the sdk and proto
// folders, so the workspace builds the examples against the sources.
func Pin(root string, b Built) error {
	sum, err := b.GoSum()
	if err != nil {
		return err
	}
	for _, dir := range Examples {
		p := filepath.Join(root, filepath.FromSlash(dir), "go.mod")
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("pin %s: %w", dir, err)
		}
		f, err := modfile.Parse(p, data, nil)
		if err != nil {
			return fmt.Errorf("pin %s: %w", dir, err)
		}
		for _, r := range f.Require {
			if r.Mod.Path == SDKPath || r.Mod.Path == ProtoPath {
				if err := f.AddRequire(r.Mod.Path, b.Version); err != nil {
					return fmt.Errorf("pin %s: %w", dir, err)
				}
			}
		}
		f.Cleanup()
		out, err := f.Format()
		if err != nil {
			return fmt.Errorf("pin %s: %w", dir, err)
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			return fmt.Errorf("pin %s: %w", dir, err)
		}
		sp := filepath.Join(root, filepath.FromSlash(dir), "go.sum")
		old, _ := os.ReadFile(sp)
		var keep []string
		for _, l := range strings.Split(string(old), "\n") {
			if !strings.HasPrefix(l, SDKPath+" ") && !strings.HasPrefix(l, ProtoPath+" ") {
				keep = append(keep, l)
			}
		}
		if err := os.WriteFile(sp, []byte(MergeSums(strings.Join(keep, "\n"), string(sum))), 0o644); err != nil {
			return fmt.Errorf("pin %s: %w", dir, err)
		}
	}
	return pinWork(filepath.Join(root, "go.work"), b.Version)
}

func pinWork(p, v string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return fmt.Errorf("pin go.work: %w", err)
	}
	w, err := modfile.ParseWork(p, data, nil)
	if err != nil {
		return fmt.Errorf("pin go.work: %w", err)
	}
	for _, r := range w.Replace {
		if r.Old.Path == SDKPath || r.Old.Path == ProtoPath {
			if err := w.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return fmt.Errorf("pin go.work: %w", err)
			}
		}
	}
	for _, m := range []struct{ path, dir string }{{ProtoPath, "./proto"}, {SDKPath, "./sdk"}} {
		for _, ver := range []string{"v0.0.0", v} {
			if err := w.AddReplace(m.path, ver, m.dir, ""); err != nil {
				return fmt.Errorf("pin go.work: %w", err)
			}
		}
	}
	w.Cleanup()
	return os.WriteFile(p, modfile.Format(w.Syntax), 0o644)
}
