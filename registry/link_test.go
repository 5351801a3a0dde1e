package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

func TestLink(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	dir := filepath.Join(t.TempDir(), "mine")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(skillMD("Mine")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	e, err := NewPipeline(s).Link(ctx, LinkRequest{Dir: dir, Stamp: "one"}, buildPrep)
	if err != nil {
		t.Fatal(err)
	}
	if e.Source != SourceDev || !e.Trusted || e.Path != dir || e.Stamp != "one" || e.ManifestSHA256 != "" || e.CommitSHA != "" {
		t.Fatalf("entry = %+v; want dev, trusted, in place, no pin or hash", e)
	}
	if e.Plugin == nil || !within(s.PluginsDir(), e.Plugin.Path) || len(e.Tools) != 1 {
		t.Fatalf("plugin = %+v, tools = %+v", e.Plugin, e.Tools)
	}
	if _, err := os.Stat(e.Plugin.Path); err != nil {
		t.Fatalf("plugin binary: %v", err)
	}

	// Linking again rebuilds and keeps the install time.
	again, err := NewPipeline(s).Link(ctx, LinkRequest{Dir: dir, Stamp: "two"}, buildPrep)
	if err != nil || again.Stamp != "two" || !again.InstalledAt.Equal(e.InstalledAt) {
		t.Fatalf("relink = %+v, %v", again, err)
	}

	// Update does not apply; remove keeps the folder.
	if _, err := NewPipeline(s).Update(ctx, UpdateRequest{Names: []string{"mine"}}, buildPrep); !errors.Is(err, ErrLinked) {
		t.Fatalf("Update = %v; want ErrLinked", err)
	}
	if _, err := s.Remove(ctx, "mine"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, manifest.ManifestFile)); err != nil {
		t.Fatalf("remove touched the linked folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.PluginsDir(), "mine")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("built plugin left behind: %v", err)
	}
	assertConsistent(t, s)
}

func TestLinkRefusesAnInstalledSkill(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("taken")})
	mustAdd(t, s, repo.FileURL(), nil, buildPrep)
	_, err := NewPipeline(s).Link(context.Background(), LinkRequest{Dir: repo.Dir()}, buildPrep)
	if !errors.Is(err, ErrAlreadyInstalled) {
		t.Fatalf("Link = %v; want ErrAlreadyInstalled", err)
	}
	if e, _ := s.Get("taken"); e.Source != SourceGit {
		t.Fatalf("entry changed: %+v", e)
	}
	assertConsistent(t, s)
}
