package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/registry/manifest"
)

// reservedStore is a store that refuses the name base, as the CLI's
// refuses the bundled skills' names.
func reservedStore(t *testing.T) *Store {
	t.Helper()
	s := newStore(t)
	s.Reserved = func(c string) bool { return c == "base" }
	return s
}

// TestReservedName: add, link and sync refuse a reserved name before
// anything is written or built; the same skill under another name, and
// the other skills of the repository, still install (the control).
func TestReservedName(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{
		"imposter/SKILL.md": skillMD("Base"),
		"plain/SKILL.md":    skillMD("plain"),
	})
	ctx := context.Background()
	s := reservedStore(t)
	built := false
	prep := func(ctx context.Context, st *Staged) error { built = true; return buildPrep(ctx, st) }
	for _, tc := range []struct {
		name string
		mod  func(*AddRequest)
	}{
		{"by its manifest", func(r *AddRequest) { r.Skill = "imposter" }},
		{"with --all", func(r *AddRequest) { r.All = true }},
		{"by --name", func(r *AddRequest) { r.Skill = "plain"; r.Name = "BASE" }},
	} {
		_, err := add(t, s, repo.FileURL(), tc.mod, prep)
		if !errors.Is(err, ErrReservedName) {
			t.Errorf("%s: Add = %v; want ErrReservedName", tc.name, err)
		}
	}
	if built {
		t.Error("a plugin was built for a refused name")
	}
	if entries := assertConsistent(t, s); len(entries) != 0 {
		t.Fatalf("installed %+v", entries)
	}
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "imposter"; r.Name = "my-base" }, buildPrep)
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "plain" }, buildPrep)

	dir := filepath.Join(t.TempDir(), "base")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(skillMD("base")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPipeline(s).Link(ctx, LinkRequest{Dir: dir}, buildPrep); !errors.Is(err, ErrReservedName) {
		t.Errorf("Link = %v; want ErrReservedName", err)
	}

	// A lock made where base was allowed does not sync it in here.
	free := newStore(t)
	mustAdd(t, free, repo.FileURL(), func(r *AddRequest) { r.Skill = "imposter" }, buildPrep)
	entries, err := free.List()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLock(entries)
	if err != nil {
		t.Fatal(err)
	}
	fresh := reservedStore(t)
	if _, err := syncLock(t, fresh, l, true); !errors.Is(err, ErrReservedName) {
		t.Errorf("Sync = %v; want ErrReservedName", err)
	}
	if entries := assertConsistent(t, fresh); len(entries) != 0 {
		t.Fatalf("sync installed %+v", entries)
	}
}

// TestAddReview: Review sees every selected skill, read but not built, and
// an error from it installs nothing.
func TestAddReview(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{
		"one/SKILL.md": skillMD("one", "permissions:", "  env: [ONE_TOKEN]", "  network: [api.example.com:443]"),
		"two/SKILL.md": skillMD("two"),
	})
	s := newStore(t)
	var seen []Reviewed
	refuse := errors.New("no")
	_, err := add(t, s, repo.FileURL(), func(r *AddRequest) {
		r.All = true
		r.Review = func(rs []Reviewed) error { seen = rs; return refuse }
	}, func(context.Context, *Staged) error { t.Error("prepare called before review"); return nil })
	if !errors.Is(err, refuse) {
		t.Fatalf("Add = %v; want the review's error", err)
	}
	if len(seen) != 2 || seen[0].Canonical != "one" || seen[0].Path != "one" || seen[1].Canonical != "two" ||
		len(seen[0].Manifest.Permissions.Env) != 1 || seen[0].Manifest.Permissions.Network[0] != "api.example.com:443" {
		t.Fatalf("reviewed %+v", seen)
	}
	if entries := assertConsistent(t, s); len(entries) != 0 {
		t.Fatalf("installed %+v", entries)
	}
}
