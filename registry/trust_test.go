package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

func TestTrustBuildsWhatWasPinned(t *testing.T) {
	t.Parallel()
	// Trust builds a copy of the installed folder, never the folder
	// itself (the build must not write into an installed skill).
	repo := gittest.NewRepo(t, map[string]string{
		"skills/p/SKILL.md":      skillMD("p", "plugin:\n  build: ./plugin"),
		"skills/p/plugin/go.mod": "module example.com/x\n",
		"skills/p/plugin/a.go":   "package main\n",
		"skills/s/SKILL.md":      skillMD("s"),
		"skills/s/scripts/a.py":  "print(1)\n",
	})
	s := newStore(t)
	var preps atomic.Int32
	var sawGoMod atomic.Bool
	prep := func(ctx context.Context, st *Staged) error {
		preps.Add(1)
		_, err := os.Stat(filepath.Join(st.SkillDir, "plugin", "go.mod"))
		if err == nil && filepath.Base(filepath.Dir(st.SkillDir)) != "skills" {
			sawGoMod.Store(true)
		}
		return buildPrep(ctx, st)
	}
	untrusted := func(r *AddRequest) { r.Trusted = false; r.Skill = "p" }
	e := mustAdd(t, s, repo.FileURL(), untrusted, prep)
	if preps.Load() != 0 || e.Plugin != nil || len(e.Tools) != 0 || e.Trusted {
		t.Fatalf("untrusted add ran prep %d times; entry %+v", preps.Load(), e)
	}
	if _, err := os.Stat(s.PluginsDir()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("plugins dir after untrusted add: %v", err)
	}
	got, err := NewPipeline(s).Trust(context.Background(), TrustRequest{Name: "P"}, prep)
	if err != nil {
		t.Fatal(err)
	}
	if preps.Load() != 1 || !sawGoMod.Load() || !got.Trusted || got.Plugin == nil || len(got.Tools) != 1 || got.DirHash != e.DirHash {
		t.Fatalf("after Trust: preps %d, go.mod seen %v, entry %+v", preps.Load(), sawGoMod.Load(), got)
	}
	assertConsistent(t, s)
	// Again: nothing to build.
	if _, err := NewPipeline(s).Trust(context.Background(), TrustRequest{Name: "p"}, prep); err != nil || preps.Load() != 1 {
		t.Fatalf("second Trust = %v, preps %d", err, preps.Load())
	}

	// A skill without a plugin is only marked; a tampered one is refused.
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Trusted = false; r.Skill = "s" }, prep)
	es, _ := s.Get("s")
	if err := os.WriteFile(filepath.Join(es.Path, "scripts", "a.py"), []byte("evil"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPipeline(s).Trust(context.Background(), TrustRequest{Name: "s"}, prep); !errors.Is(err, ErrTampered) {
		t.Fatalf("Trust of an edited skill = %v; want ErrTampered", err)
	}
	if es, _ := s.Get("s"); es.Trusted {
		t.Fatal("an edited skill was trusted")
	}
	if err := os.WriteFile(filepath.Join(es.Path, "scripts", "a.py"), []byte("print(1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := NewPipeline(s).Trust(context.Background(), TrustRequest{Name: "s"}, prep); err != nil || !got.Trusted || preps.Load() != 1 {
		t.Fatalf("Trust of a script skill = %+v, %v (preps %d)", got, err, preps.Load())
	}
	assertConsistent(t, s)
}
