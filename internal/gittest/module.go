package gittest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// PluginModule returns the files a test repository needs so that skills in
// it can build plugins against this module's real SDK with a plain
// `go build`: go.mod, go.sum and the sdk and proto packages, keyed by slash
// path. moduleRoot is the path of this module's root from the test.
func PluginModule(t testing.TB, moduleRoot string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(moduleRoot, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = string(b)
	}
	// sdk and proto are modules of their own; this repository joins them
	// with go.work, a test repository with replace lines.
	files["go.mod"] += "\nreplace (\n\tgithub.com/agentskills/agent/proto => ./proto\n\tgithub.com/agentskills/agent/sdk => ./sdk\n)\n"
	AddTree(t, files, filepath.Join(moduleRoot, "sdk"), "sdk")
	AddTree(t, files, filepath.Join(moduleRoot, "proto"), "proto")
	return files
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
