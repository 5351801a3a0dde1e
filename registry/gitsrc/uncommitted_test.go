package gitsrc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// TestUncommitted: the working tree of a local repository against the
// commit add installs, for one skill folder: changed, new and deleted
// files count; ignored files (at the root, in the folder, in
// info/exclude), __pycache__ and other folders do not; a ref asked for by
// name is not the working tree's business.
func TestUncommitted(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, map[string]string{
		".gitignore":               "*.log\n",
		"skills/a/SKILL.md":        string(skillFile("a").Data),
		"skills/a/.gitignore":      "local/\n",
		"skills/a/scripts/keep.py": "print(1)\n",
		"skills/a/scripts/gone.py": "print(2)\n",
		"skills/b/SKILL.md":        string(skillFile("b").Data),
	})
	r.Tag(t, "v1.0.0")
	write := func(rel, data string) {
		t.Helper()
		p := filepath.Join(r.Dir(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/a/SKILL.md", "---\nname: a\ndescription: edited\n---\n")
	write("skills/a/scripts/new.py", "print(3)\n")
	write("skills/a/debug.log", "ignored at the root\n")
	write("skills/a/local/x.txt", "ignored in the folder\n")
	write("skills/a/excluded.tmp", "ignored by info/exclude\n")
	write(".git/info/exclude", "*.tmp\n")
	write("skills/a/scripts/__pycache__/keep.cpython-312.pyc", "bytecode")
	write("skills/b/SKILL.md", "---\nname: b\ndescription: another skill's edit\n---\n")
	if err := os.Remove(filepath.Join(r.Dir(), "skills", "a", "scripts", "gone.py")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name, source, ref, dir string
		want                   []string
	}{
		{name: "path, head", source: r.Dir(), dir: "skills/a", want: []string{"SKILL.md", "scripts/gone.py (deleted)", "scripts/new.py (new)"}},
		{name: "file URL, head", source: r.FileURL(), dir: "skills/a", want: []string{"SKILL.md", "scripts/gone.py (deleted)", "scripts/new.py (new)"}},
		{name: "other folder", source: r.Dir(), dir: "skills/b", want: []string{"SKILL.md"}},
		{name: "a tag asked for", source: r.Dir(), ref: "v1.0.0", dir: "skills/a", want: nil},
		{name: "served over http", source: gittest.ServeRepo(t, r), dir: "skills/a", want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: tc.source, Ref: tc.ref, CacheDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			got, err := snap.Uncommitted(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Uncommitted(%s) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}

// TestUncommittedAgreesWithGitStatus: the stat cache in git's index is
// trusted as git trusts it, no more: an edit that kept the size and set
// the mtime back (its ctime still moved) is reported, like an ordinary
// edit; untouched files are not, and are not read; `git status` says the
// same.
func TestUncommittedAgreesWithGitStatus(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, map[string]string{
		"skills/a/SKILL.md":  string(skillFile("a").Data),
		"skills/a/kept.txt":  "aaaa\n",
		"skills/a/same.txt":  "bbbb\n",
		"skills/a/plain.txt": "cccc\n",
	})
	dir := filepath.Join(r.Dir(), "skills", "a")
	same := filepath.Join(dir, "same.txt")
	fi, err := os.Stat(same)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(same, []byte("BBBB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(same, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.txt"), []byte("CCCC\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{"plain.txt", "same.txt"}

	snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: r.Dir(), CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	snap.local.read = func(p string) ([]byte, error) {
		read = append(read, filepath.Base(p))
		return os.ReadFile(p)
	}
	got, err := snap.Uncommitted("skills/a")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Uncommitted = %q, want %q", got, want)
	}
	// Only what the index cannot vouch for is read.
	if slices.Sort(read); !slices.Equal(read, want) {
		t.Errorf("read %q, want only %q", read, want)
	}
	// git status runs last: it rewrites the index it reads.
	out, err := exec.Command("git", "-C", r.Dir(), "status", "--porcelain", "--", "skills/a").CombinedOutput()
	if err != nil {
		t.Fatalf("git status: %v\n%s", err, out)
	}
	var fromGit []string
	for line := range strings.Lines(string(out)) {
		fromGit = append(fromGit, strings.TrimPrefix(strings.TrimSpace(line[2:]), "skills/a/"))
	}
	if !slices.Equal(fromGit, want) {
		t.Fatalf("git status says %q, want %q", fromGit, want)
	}
}
