package base

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindProgram: how exec finds a program in a PATH folder, the Unix
// way (execute bit) and the Windows way (extensions, no execute bit),
// both over real files.
func TestFindProgram(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{
		"tool": 0o755, "data": 0o644, "go.exe": 0o644, "run.COM": 0o644, "build.bat": 0o644, "plain": 0o644,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.exe"), 0o755); err != nil {
		t.Fatal(err)
	}
	windows := []string{".exe", ".com"}
	tests := []struct {
		name, find string
		exts       []string
		want       string // "" not found
	}{
		{name: "unix: executable", find: "tool", want: "tool"},
		{name: "unix: no execute bit", find: "data"},
		{name: "unix: missing", find: "nope"},
		{name: "windows: .exe added", find: "go", exts: windows, want: "go.exe"},
		{name: "windows: extension given", find: "go.exe", exts: windows, want: "go.exe"},
		{name: "windows: extension in capitals", find: "run.COM", exts: windows, want: "run.COM"},
		{name: "windows: .bat refused", find: "build.bat", exts: windows},
		{name: "windows: .bat not added", find: "build", exts: windows},
		{name: "windows: no extension, no execute bit needed, still refused", find: "plain", exts: windows},
		{name: "windows: a folder is no program", find: "sub", exts: windows},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := findProgram(dir, tt.find, tt.exts)
			if tt.want == "" {
				if ok {
					t.Fatalf("found %s", got)
				}
				return
			}
			if !ok || got != filepath.Join(dir, tt.want) {
				t.Fatalf("findProgram(%q) = %q, %v; want %s", tt.find, got, ok, tt.want)
			}
		})
	}
}
