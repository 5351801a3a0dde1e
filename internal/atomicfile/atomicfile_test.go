package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		old  []byte // nil: no file before
		perm os.FileMode
	}{
		{name: "new file", perm: 0o644},
		{name: "replaces", old: []byte("old content"), perm: 0o644},
		{name: "private", old: []byte("old"), perm: 0o600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, ".index")
			if tc.old != nil {
				if err := os.WriteFile(path, tc.old, 0o666); err != nil {
					t.Fatal(err)
				}
			}
			if err := Write(path, []byte("new"), tc.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "new" {
				t.Fatalf("content = %q, %v; want \"new\"", got, err)
			}
			fi, _ := os.Stat(path)
			if fi.Mode().Perm() != tc.perm {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), tc.perm)
			}
			if des, _ := os.ReadDir(dir); len(des) != 1 {
				t.Errorf("the folder holds %d entries, want only the file", len(des))
			}
		})
	}
}

// TestWriteFailureLeavesNoTemp: a rename that fails (the target is a
// folder) leaves the old target and no temporary file.
func TestWriteFailureLeavesNoTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, []byte("x"), 0o644); err == nil {
		t.Fatal("Write over a non-empty folder succeeded")
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("the folder holds %d entries, want only the target", len(des))
	}
}
