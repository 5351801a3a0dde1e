package gitsrc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/manifest"
)

func TestLoadManifestFromDisk(t *testing.T) {
	t.Parallel()
	const ok = "---\ndescription: greets\n---\nSay hello.\n"
	outside := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(outside, []byte("---\nname: elsewhere\ndescription: x\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		want    string // the skill's name, or
		wantErr string // a problem's words
	}{
		{name: "the folder names a skill without a name", want: "greet", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "SKILL.md"), ok)
		}},
		{name: "no folder", wantErr: "no SKILL.md here", setup: func(t *testing.T, dir string) {
			if err := os.Remove(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "no SKILL.md", wantErr: "no SKILL.md here", setup: func(t *testing.T, dir string) {}},
		{name: "a link out of the skill", wantErr: "symbolic link", setup: func(t *testing.T, dir string) {
			if err := os.Symlink(outside, filepath.Join(dir, "SKILL.md")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "greet")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			tt.setup(t, dir)
			m, _, err := LoadManifest(dir)
			if tt.wantErr != "" {
				var me *manifest.ManifestError
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.wantErr) || me.Problems[0].File != filepath.Join(dir, "SKILL.md") {
					t.Fatalf("LoadManifest = %v; want a problem in %s saying %q", err, filepath.Join(dir, "SKILL.md"), tt.wantErr)
				}
				return
			}
			if err != nil || m.Name != tt.want {
				t.Fatalf("LoadManifest = %+v, %v; want skill %s", m, err, tt.want)
			}
		})
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
