package gittest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/build/sdkmod"
)

// PluginModule returns the go.mod and go.sum of a plugin module at the
// slash path dir of a test repository, as `agent skill init` writes them:
// module modulePath requiring the SDK this agent embeds, like any author's
// plugin (no replace, nothing copied from this repository).
func PluginModule(t testing.TB, dir, modulePath string) map[string]string {
	t.Helper()
	mod, err := sdkmod.Embedded().PluginGoMod(modulePath)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := sdkmod.GoSum()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{dir + "/go.mod": string(mod), dir + "/go.sum": string(sum)}
}

// AddTree adds the regular, non-test files under src to files, at the slash
// path prefix to. testdata folders are left out.
func AddTree(t testing.TB, files map[string]string, src, to string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, "_test.go") || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		files[to+"/"+filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
