package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/registry/manifest"
)

func TestLoadInstalled(t *testing.T) {
	const skillFile = "---\nname: demo\ndescription: A demo.\n---\nbody\n"
	sum := sha256.Sum256([]byte(skillFile))
	recorded := hex.EncodeToString(sum[:])
	tests := []struct {
		name    string
		hash    string
		change  func(t *testing.T, dir string)
		wantErr error
	}{
		{name: "unchanged", hash: recorded},
		{name: "no recorded hash loads anything valid", hash: "",
			change: func(t *testing.T, dir string) { write(t, dir, "---\nname: demo\ndescription: Edited.\n---\n") }},
		{name: "edited", hash: recorded,
			change:  func(t *testing.T, dir string) { write(t, dir, "---\nname: demo\ndescription: Edited.\n---\nbody\n") },
			wantErr: ErrModified},
		{name: "edited into invalid YAML reports the parse error", hash: recorded,
			change: func(t *testing.T, dir string) {
				write(t, dir, "---\nname: demo\npermissions:\n  env: [unclosed\n---\n")
			},
			wantErr: manifest.ErrInvalidManifest},
		{name: "replaced by a link to the same bytes", hash: recorded,
			change: func(t *testing.T, dir string) {
				other := filepath.Join(t.TempDir(), manifest.ManifestFile)
				if err := os.WriteFile(other, []byte(skillFile), 0o644); err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(dir, manifest.ManifestFile))
				if err := os.Symlink(other, filepath.Join(dir, manifest.ManifestFile)); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: manifest.ErrInvalidManifest},
		{name: "deleted", hash: recorded,
			change:  func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, manifest.ManifestFile)) },
			wantErr: manifest.ErrInvalidManifest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, dir, skillFile)
			if tt.change != nil {
				tt.change(t, dir)
			}
			m, _, err := LoadInstalled(Entry{Canonical: "demo", Path: dir, Integrity: Integrity{ManifestSHA256: tt.hash}})
			if tt.wantErr == nil {
				if err != nil || m.Name != "demo" {
					t.Fatalf("LoadInstalled = %v, %v", m, err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func write(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
