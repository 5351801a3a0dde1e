package gittest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
	git "github.com/go-git/go-git/v5"
)

func TestCloneOverHTTP(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, map[string]string{"SKILL.md": "hello\n", "a/b.txt": "b"})
	r.Tag(t, "v1.0.0")
	r.Branch(t, "dev")
	sha := r.Commit(t, map[string]string{"c.txt": "c"}, "on dev")

	for name, url := range map[string]string{"http": gittest.ServeRepo(t, r), "file": r.FileURL()} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "clone")
			g, err := git.PlainClone(dir, false, &git.CloneOptions{URL: url, Tags: git.AllTags})
			if err != nil {
				t.Fatalf("clone %s: %v", url, err)
			}
			if _, err := g.Tag("v1.0.0"); err != nil {
				t.Errorf("tag missing: %v", err)
			}
			ref, err := g.Reference("refs/remotes/origin/dev", true)
			if err != nil || ref.Hash().String() != sha {
				t.Errorf("dev = %v, %v; want %s", ref, err, sha)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "a/b.txt")); err != nil || string(b) != "b" {
				t.Errorf("a/b.txt = %q, %v", b, err)
			}
		})
	}
}
