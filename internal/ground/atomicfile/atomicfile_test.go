package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		old     string      // "" = no file before
		oldMode fs.FileMode // mode of the old file
		perm    fs.FileMode
		opts    []Option
	}{
		{name: "new file", perm: 0o644},
		{name: "new private file", perm: 0o600},
		{name: "replace", old: "old content", oldMode: 0o644, perm: 0o644},
		{name: "replace with another mode", old: "old", oldMode: 0o600, perm: 0o755},
		{name: "mode kept above the umask", perm: 0o666},
		{name: "sync", old: "old", oldMode: 0o644, perm: 0o644, opts: []Option{Sync()}},
		{name: "sync dir", perm: 0o644, opts: []Option{SyncDir()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "registry.json")
			if tt.old != "" {
				writeOld(t, path, tt.old, tt.oldMode)
			}
			if err := Write(path, []byte("new"), tt.perm, tt.opts...); err != nil {
				t.Fatal(err)
			}
			assertFile(t, path, "new", tt.perm)
			assertOnly(t, dir, "registry.json")
		})
	}
}

// TestWriteFailure: a write that fails at any step leaves the old file as
// it was and no temporary file behind.
func TestWriteFailure(t *testing.T) {
	errRename := errors.New("rename refused")
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the target
		rename  func(d dir, oldname, newname string) error
		wantErr error
	}{
		{
			name: "rename fails",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "target")
				writeOld(t, p, "old", 0o644)
				return p
			},
			rename:  func(dir, string, string) error { return errRename },
			wantErr: errRename,
		},
		{
			name: "target is a folder that is not empty",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "target")
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
				writeOld(t, filepath.Join(p, "keep"), "old", 0o644)
				return p
			},
			wantErr: fs.ErrExist,
		},
		{
			name: "folder missing",
			setup: func(t *testing.T, dir string) string {
				return filepath.Join(dir, "missing", "target")
			},
			wantErr: fs.ErrNotExist,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.rename != nil {
				saved := rename
				rename = tt.rename
				t.Cleanup(func() { rename = saved })
			}
			dir := t.TempDir()
			target := tt.setup(t, dir)
			before := snapshot(t, dir)
			err := Write(target, []byte("new"), 0o644)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Write = %v, want %v", err, tt.wantErr)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the folder changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// TestBeforeReplace: the hook runs with the new data complete in the
// temporary file and the old content still in place.
func TestBeforeReplace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	writeOld(t, path, "old", 0o644)
	called := false
	err := Write(path, []byte("new"), 0o644, SyncDir(), BeforeReplace(func() {
		called = true
		assertFile(t, path, "old", 0o644)
		tmps, _ := filepath.Glob(filepath.Join(dir, ".registry.json.tmp-*"))
		if len(tmps) != 1 {
			t.Fatalf("temporary files = %v, want one", tmps)
		}
		assertFile(t, tmps[0], "new", 0o644)
	}))
	if err != nil || !called {
		t.Fatalf("Write = %v, hook called %v", err, called)
	}
	assertFile(t, path, "new", 0o644)
	assertOnly(t, dir, "registry.json")
}

func TestWriteIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		wantErr bool
	}{
		{name: "new file", file: "todo.json"},
		{name: "replace", file: "old.sh"},
		{name: "in a subfolder", file: "sub/notes.md"},
		{name: "dot dot escapes", file: "../outside.txt", wantErr: true},
		{name: "link to outside escapes", file: "out/evil.txt", wantErr: true},
		{name: "absolute path", file: "/tmp/evil.txt", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			top := t.TempDir()
			work, outside := filepath.Join(top, "work"), filepath.Join(top, "outside")
			for _, d := range []string{filepath.Join(work, "sub"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeOld(t, filepath.Join(work, "old.sh"), "old", 0o755)
			if err := os.Symlink(outside, filepath.Join(work, "out")); err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(work)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			before := snapshot(t, top)
			err = WriteIn(root, tt.file, []byte("new"), 0o755)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("WriteIn(%q) succeeded; want it refused", tt.file)
				}
				if after := snapshot(t, top); after != before {
					t.Errorf("the tree changed:\nbefore %s\nafter  %s", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertFile(t, filepath.Join(work, tt.file), "new", 0o755)
			if des, _ := os.ReadDir(outside); len(des) != 0 {
				t.Errorf("the outside folder holds %v", des)
			}
			if s := snapshot(t, top); strings.Contains(s, ".tmp-") {
				t.Errorf("temporary file left: %s", s)
			}
		})
	}
}

func writeOld(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func assertFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != content {
		t.Fatalf("%s holds %q (%v); want %q", path, got, err, content)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode() != mode {
		t.Errorf("%s mode = %v (%v); want %v", path, fi.Mode(), err, mode)
	}
}

// assertOnly checks that dir holds exactly the named entries.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range des {
		got = append(got, d.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %v; want %v", dir, got, names)
	}
}

// snapshot is every path under dir with its mode and content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
