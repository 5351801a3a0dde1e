package sdkmod

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"

	"github.com/agentskills/agent/internal/ground/atomicfile"
)

// WriteProxy lays the embedded modules out in dir as a GOPROXY directory
// (file://dir serves them): <path>/@v/{list,<v>.info,<v>.mod,<v>.zip}.
// Versions are content-addressed, so files already there are kept as they
// are; each new file is written to a temp file and renamed, so concurrent
// agents never see half a zip.
func WriteProxy(dir string) error {
	v := Version()
	for _, m := range Modules() {
		vdir := filepath.Join(dir, filepath.FromSlash(m.Path), "@v")
		if _, err := os.Stat(filepath.Join(vdir, v+".info")); err == nil {
			continue
		}
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return fmt.Errorf("write sdk module proxy: %w", err)
		}
		mod, err := m.File("go.mod")
		if err != nil {
			return err
		}
		// The .info file last: its presence says the version is complete.
		for _, f := range []struct {
			name string
			data []byte
		}{
			{v + ".zip", m.Zip},
			{v + ".mod", mod},
			{v + ".info", []byte(fmt.Sprintf("{\"Version\":%q}\n", v))},
		} {
			if err := atomicfile.Write(filepath.Join(vdir, f.name), f.data, 0o644); err != nil {
				return fmt.Errorf("write sdk module proxy: %w", err)
			}
		}
		if err := writeList(vdir); err != nil {
			return fmt.Errorf("write sdk module proxy: %w", err)
		}
	}
	return nil
}

// writeList rewrites @v/list from the complete versions in vdir.
func writeList(vdir string) error {
	des, err := os.ReadDir(vdir)
	if err != nil {
		return err
	}
	var vs []string
	for _, d := range des {
		if v, ok := strings.CutSuffix(d.Name(), ".info"); ok {
			vs = append(vs, v)
		}
	}
	sort.Strings(vs)
	return atomicfile.Write(filepath.Join(vdir, "list"), []byte(strings.Join(vs, "\n")+"\n"), 0o644)
}

// Extract unpacks the embedded modules under dir, at <path>@<version>, and
// returns each module's folder by path. It serves builds that cannot use
// the proxy directory: when GONOPROXY (or GOPRIVATE) matches the SDK's
// path, go would fetch it straight from its repository, so the build
// replaces it with these folders instead.
func Extract(dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range Modules() {
		target := filepath.Join(dir, filepath.FromSlash(m.Path)+"@"+m.Version)
		out[m.Path] = target
		if _, err := os.Stat(filepath.Join(target, "go.mod")); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, fmt.Errorf("extract %s: %w", m.Path, err)
		}
		if err := extract(m, target); err != nil {
			return nil, fmt.Errorf("extract %s: %w", m.Path, err)
		}
	}
	return out, nil
}

func extract(m Module, target string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(target), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	zipPath := filepath.Join(tmp, "m.zip")
	if err := os.WriteFile(zipPath, m.Zip, 0o644); err != nil {
		return err
	}
	src := filepath.Join(tmp, "src")
	if err := modzip.Unzip(src, module.Version{Path: m.Path, Version: m.Version}, zipPath); err != nil {
		return err
	}
	if err := os.Rename(src, target); err != nil {
		if _, serr := os.Stat(filepath.Join(target, "go.mod")); serr == nil {
			return nil // another agent extracted it first
		}
		return err
	}
	return nil
}
