package exec

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles creates files (slash paths relative to dir); content "->x"
// makes a symbolic link to x and "/" a directory.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(content, "->"):
			err = os.Symlink(content[2:], p)
		case content == "/":
			err = os.MkdirAll(p, 0o755)
		default:
			err = os.WriteFile(p, []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

type found struct {
	name string
	err  string // substring; "" means Err == nil
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"evil.py": "print('outside')\n", "dir/x.py": "print(1)\n"})
	tests := []struct {
		name    string
		files   map[string]string
		scripts []string
		ignore  []string
		want    []found
		wantErr string
	}{
		{name: "no scripts folder", files: map[string]string{"SKILL.md": "x"}},
		{
			name: "glob skips dot files, directories and other extensions",
			files: map[string]string{
				"scripts/status.py": "print(1)\n", "scripts/.hidden.py": "", "scripts/dir.py/": "/",
				"scripts/readme.txt": "", "scripts/sub/deep.py": "", "scripts/Upper.PY": "",
			},
			want: []found{{name: "Upper"}, {name: "status"}},
		},
		{
			name:   "ignore globs",
			files:  map[string]string{"scripts/a.py": "", "scripts/_private.py": "", "scripts/a_test.py": ""},
			ignore: []string{"_*.py", "*_test.py"},
			want:   []found{{name: "a"}},
		},
		{
			name:  "symbolic links are rejected, not followed",
			files: map[string]string{"scripts/ok.py": "", "scripts/link.py": "->" + filepath.Join(outside, "evil.py"), "scripts/rel.py": "->ok.py"},
			want:  []found{{name: "link", err: "symbolic link"}, {name: "ok"}, {name: "rel", err: "symbolic link"}},
		},
		{
			name:    "a linked scripts folder is an error",
			files:   map[string]string{"scripts": "->" + outside},
			wantErr: "symbolic link",
		},
		{
			name:    "explicit list: names with and without .py, case-insensitive, nested paths",
			files:   map[string]string{"scripts/status.py": "", "scripts/Report.py": "", "tools/run.py": "", "scripts/other.py": ""},
			scripts: []string{"status", "report.py", "tools/run.py", "status.py"},
			want:    []found{{name: "Report"}, {name: "run"}, {name: "status"}},
		},
		{
			name:  "explicit list: escapes and links are rejected",
			files: map[string]string{"scripts/ok.py": "", "lnk": "->" + filepath.Join(outside, "dir"), "scripts/l.py": "->ok.py"},
			scripts: []string{
				"../evil", "scripts/../../evil.py", "/etc/passwd.py", "lnk/x.py", "scripts/l", "missing", ".hidden", "a\\b", "ok",
			},
			want: []found{
				{name: "../evil", err: "inside the skill"}, {name: ".hidden", err: "hidden"},
				{name: "/etc/passwd.py", err: "inside the skill"}, {name: "a\\b", err: "inside the skill"},
				{name: "l", err: "symbolic link"}, {name: "missing", err: "does not exist"}, {name: "ok"},
				{name: "scripts/../../evil.py", err: "inside the skill"}, {name: "x", err: "symbolic link"},
			},
		},
		{
			name:  "explicit list: ignore still applies",
			files: map[string]string{"scripts/a.py": "", "scripts/_b.py": ""}, scripts: []string{"a", "_b"}, ignore: []string{"_*"},
			want: []found{{name: "a"}},
		},
		{
			name:    "bad ignore glob",
			files:   map[string]string{"scripts/a.py": ""},
			ignore:  []string{"["},
			wantErr: "scripts_ignore",
		},
		{
			name:  "malformed metadata is that script's error only",
			files: map[string]string{"scripts/bad.py": "# /// script\n# dependencies = 1\n# ///\n", "scripts/good.py": ""},
			want:  []found{{name: "bad", err: "dependencies must be an array"}, {name: "good"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			got, err := Discover(dir, tc.scripts, tc.ignore)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Discover() error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Discover() error = %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Discover() = %v, want %v", got, tc.want)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Name != w.name {
					t.Errorf("script %d name = %q, want %q", i, g.Name, w.name)
				}
				if g.Path != "" && !filepath.IsAbs(g.Path) || g.Path == "" && w.err == "" {
					t.Errorf("script %d path %q is not absolute", i, g.Path)
				}
				switch {
				case w.err == "" && g.Err != nil:
					t.Errorf("script %s: unexpected error %v", g.Name, g.Err)
				case w.err != "" && (g.Err == nil || !strings.Contains(g.Err.Error(), w.err)):
					t.Errorf("script %s: error %v, want %q", g.Name, g.Err, w.err)
				}
			}
		})
	}
}

func TestDiscoverTestdataAndJSON(t *testing.T) {
	t.Parallel()
	got, err := Discover(filepath.Join("testdata", "skill"), nil, []string{"_*.py"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "skill", "scripts"))
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0]["name"] != "deps" || back[1]["name"] != "hello" {
		t.Fatalf("Discover() JSON = %s", b)
	}
	if back[0]["requires_python"] != ">=3.11" || back[0]["path"] != filepath.Join(abs, "deps.py") {
		t.Errorf("deps.py JSON = %v", back[0])
	}
	if deps, _ := back[0]["dependencies"].([]any); len(deps) != 2 || deps[0] != "httpx<1" {
		t.Errorf("deps.py dependencies = %v", back[0]["dependencies"])
	}
	if _, ok := back[1]["dependencies"]; ok {
		t.Errorf("hello.py declares nothing, JSON = %v", back[1])
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	list := []Script{{Name: "status"}, {Name: "Report"}, {Name: "dup"}, {Name: "Dup"}, {Name: "DUP"}}
	tests := []struct {
		name, in, want string
		err            error
	}{
		{name: "exact", in: "status", want: "status"},
		{name: "capitalised", in: "Status", want: "status"},
		{name: "with .py", in: "status.py", want: "status"},
		{name: "upper with .PY", in: "STATUS.PY", want: "status"},
		{name: "case-insensitive other way", in: "report", want: "Report"},
		{name: "exact spelling wins over case-insensitive", in: "Dup", want: "Dup"},
		{name: "ambiguous", in: "dUp", err: ErrInvalidName},
		{name: "unknown", in: "nope", err: ErrNotFound},
		{name: "empty", in: "", err: ErrInvalidName},
		{name: "parent", in: "../status", err: ErrInvalidName},
		{name: "dots", in: "..", err: ErrInvalidName},
		{name: "slash", in: "scripts/status", err: ErrInvalidName},
		{name: "backslash", in: "a\\b", err: ErrInvalidName},
		{name: "hidden", in: ".status", err: ErrInvalidName},
		{name: "control", in: "sta\ntus", err: ErrInvalidName},
		{name: "long", in: strings.Repeat("a", 300), err: ErrInvalidName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := find(list, tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("find(%q) error = %v, want %v", tc.in, err, tc.err)
				}
				return
			}
			if err != nil || got.Name != tc.want {
				t.Fatalf("find(%q) = %q, %v; want %q", tc.in, got.Name, err, tc.want)
			}
		})
	}
}
