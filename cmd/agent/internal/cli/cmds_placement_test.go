package cli_test

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdSameTree compares two folders file by file (names and contents),
// leaving out __pycache__: sametree <want> <got>.
func cmdSameTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sametree <want> <got>")
	}
	read := func(dir string) map[string]string {
		out := map[string]string{}
		root := ts.MkAbs(dir)
		ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				out[filepath.ToSlash(rel)] = string(data)
			}
			return nil
		}))
		return out
	}
	want, got := read(args[0]), read(args[1])
	same := len(want) == len(got) && len(want) > 0
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			same = false
			if !neg {
				ts.Logf("%s differs or is missing in %s", k, args[1])
			}
		}
	}
	if same == neg {
		ts.Fatalf("%s and %s: same=%v", args[0], args[1], same)
	}
}

// cmdReadOnly checks that no file or folder under a placement is writable
// by anyone: readonly <dir>.
func cmdReadOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readonly <dir>")
	}
	ts.Check(filepath.WalkDir(ts.MkAbs(args[0]), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o222 != 0 {
			ts.Fatalf("%s is writable (%v)", p, fi.Mode())
		}
		return nil
	}))
}
