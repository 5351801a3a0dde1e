package scaffold_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/scaffold"
	"github.com/agentskills/agent/internal/build/sdkmod"
	"github.com/agentskills/agent/registry/gitsrc"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		plugin, script bool
		want           []string
	}{
		{"bare", false, false, []string{"SKILL.md"}},
		{"script", false, true, []string{"SKILL.md", "scripts/hello.py", "tests/demo.yaml"}},
		{"plugin", true, false, []string{"SKILL.md", "plugin/go.mod", "plugin/go.sum", "plugin/main.go", "plugin/main_test.go", "tests/demo.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "demo")
			got, err := scaffold.Write(dir, scaffold.Options{Name: "demo", Plugin: tc.plugin, Script: tc.script})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("files = %v, want %v", got, tc.want)
			}
			m, _, err := gitsrc.LoadManifest(dir)
			if err != nil {
				t.Fatalf("scaffold does not load: %v", err)
			}
			if (m.Plugin != nil) != tc.plugin {
				t.Fatalf("plugin = %+v", m.Plugin)
			}
			if tc.plugin {
				mod, _ := os.ReadFile(filepath.Join(dir, "plugin", "go.mod"))
				if !strings.Contains(string(mod), sdkmod.SDKPath+" "+sdkmod.Version()) || strings.Contains(string(mod), "replace") {
					t.Fatalf("go.mod:\n%s", mod)
				}
			}
		})
	}
}

func TestWriteRefusesAFolderWithFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := scaffold.Write(dir, scaffold.Options{Name: "x"}); !errors.Is(err, scaffold.ErrNotEmpty) {
		t.Fatalf("err = %v, want ErrNotEmpty", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Fatal("file changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("SKILL.md written into a folder with files")
	}
}
