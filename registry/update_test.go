package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

func update(t *testing.T, s *Store, req UpdateRequest) []UpdateResult {
	t.Helper()
	if req.AgentVersion == "" {
		req.AgentVersion = "0.5.0"
	}
	res, err := NewPipeline(s).Update(context.Background(), req, buildPrep)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return res
}

func TestUpdateWithinConstraint(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("versioned")})
	repo.Tag(t, "v1.0.0")
	v11 := repo.Commit(t, map[string]string{"f": "1.1"}, "1.1")
	repo.AnnotatedTag(t, "v1.1.0", "release 1.1")
	repo.Commit(t, map[string]string{"f": "2"}, "2")
	repo.Tag(t, "v2.0.0")
	repo.Commit(t, map[string]string{"f": "untagged"}, "tip")

	for name, url := range map[string]string{"http": gittest.ServeRepo(t, repo), "file": repo.FileURL()} {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			e := mustAdd(t, s, url+"@^1", nil, buildPrep)
			if e.CommitSHA != v11 || e.Version != "1.1.0" || e.Constraint != "^1" || e.Ref != "" {
				t.Fatalf("entry = %+v; want v1.1.0 at %s", e, v11)
			}
			if got := update(t, s, UpdateRequest{}); len(got) != 1 || got[0].Status != StatusUpToDate {
				t.Fatalf("Update = %+v; want up-to-date", got)
			}
			assertConsistent(t, s)
		})
	}
	// A new tag inside the constraint appears; one outside is ignored.
	s := newStore(t)
	mustAdd(t, s, repo.FileURL()+"@~1.1", func(r *AddRequest) { r.Trusted = false }, buildPrep)
	repo.Branch(t, "release-1")
	v12 := repo.Commit(t, map[string]string{"f": "1.2"}, "1.1.5")
	repo.Tag(t, "v1.1.5")
	repo.Commit(t, map[string]string{"f": "1.2"}, "1.2")
	repo.Tag(t, "v1.2.0")
	var asked []UpdatePlan
	got := update(t, s, UpdateRequest{Names: []string{"VERSIONED"}, Confirm: func(p UpdatePlan) (bool, error) {
		asked = append(asked, p)
		return true, nil
	}})
	want := UpdatePlan{Name: "versioned", OldSHA: v11, NewSHA: v12, OldVersion: "1.1.0", NewVersion: "1.1.5"}
	if len(got) != 1 || got[0].Status != StatusUpdated || !reflect.DeepEqual(got[0].UpdatePlan, want) || len(asked) != 1 {
		t.Fatalf("Update = %+v (asked %v); want updated %+v", got, asked, want)
	}
	e, _ := s.Get("versioned")
	if e.CommitSHA != v12 || e.PreviousSHA != v11 || e.Version != "1.1.5" || e.Trusted || e.Plugin != nil || e.DirHash == "" {
		// Untrusted: files only, no plugin built.
		t.Errorf("entry after update = %+v", e)
	}
	if b, _ := os.ReadFile(filepath.Join(e.Path, "f")); string(b) != "1.2" {
		t.Errorf("installed f = %q", b)
	}
	if err := s.CheckIntegrity(e); err != nil {
		t.Errorf("CheckIntegrity after update: %v", err)
	}
	if rec := integrityRecords(s.Home).read(e); rec == nil || rec.DirHash != e.DirHash {
		t.Errorf("integrity record after update = %+v; want one for %s", rec, e.DirHash)
	}
	assertConsistent(t, s)
}

func TestUpdateBranches(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b")})
	url := gittest.ServeRepo(t, repo)
	s := newStore(t)
	mustAdd(t, s, url, func(r *AddRequest) { r.Skill = "a" }, buildPrep) // default branch
	repo.Branch(t, "dev")
	mustAdd(t, s, url+"@dev", func(r *AddRequest) { r.Skill = "b" }, nil)
	devTip := repo.Commit(t, map[string]string{"b/new.txt": "dev"}, "dev work")
	repo.Branch(t, "main")
	mainTip := repo.Commit(t, map[string]string{"a/new.txt": "main"}, "main work")

	got := update(t, s, UpdateRequest{All: true})
	if len(got) != 2 || got[0].Status != StatusUpdated || got[0].NewSHA != mainTip || got[1].Status != StatusUpdated || got[1].NewSHA != devTip {
		t.Fatalf("Update = %+v; want a -> %s, b -> %s", got, mainTip, devTip)
	}
	ea, _ := s.Get("a")
	eb, _ := s.Get("b")
	if _, err := os.Stat(filepath.Join(ea.Path, "new.txt")); err != nil {
		t.Error("a not updated on disk")
	}
	if eb.Ref != "dev" || eb.Plugin == nil {
		t.Errorf("b = %+v", eb)
	}
	if _, err := os.Stat(filepath.Join(s.PluginsDir(), "a")); err != nil {
		t.Error("a's plugin dir missing")
	}
	// The old plugin build was removed.
	if ents, _ := os.ReadDir(filepath.Join(s.PluginsDir(), "a")); len(ents) != 1 {
		t.Errorf("plugins/a has %d builds; want 1", len(ents))
	}
	assertConsistent(t, s)
}

func TestUpdatePinned(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("pin")})
	first := repo.Head(t)
	repo.Tag(t, "v1.0.0")
	tests := []struct{ name, ref string }{
		{name: "tag", ref: "v1.0.0"},
		{name: "tag without v", ref: "1.0.0"},
		{name: "full sha", ref: first},
		{name: "short sha", ref: first[:8]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			e := mustAdd(t, s, repo.FileURL()+"@"+tt.ref, nil, nil)
			if e.CommitSHA != first || e.Ref != tt.ref {
				t.Fatalf("entry = %+v", e)
			}
			repo.Commit(t, map[string]string{"x": tt.name}, "more")
			got := update(t, s, UpdateRequest{Names: []string{"pin"}})
			if len(got) != 1 || got[0].Status != StatusPinned {
				t.Fatalf("Update = %+v; want pinned", got)
			}
			if e2, _ := s.Get("pin"); e2.CommitSHA != first {
				t.Errorf("moved to %s", e2.CommitSHA)
			}
		})
	}
}

func TestUpdateLocalEdits(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("edit"), "keep.txt": "k", "gone.txt": "g"})
	s := newStore(t)
	e := mustAdd(t, s, repo.FileURL(), nil, nil)
	newSHA := repo.Commit(t, map[string]string{"keep.txt": "k2"}, "change")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(e.Path, "SKILL.md"), []byte(skillMD("edit")+"local\n"), 0o644))
	must(os.WriteFile(filepath.Join(e.Path, "mine.txt"), []byte("m"), 0o644))
	must(os.Remove(filepath.Join(e.Path, "gone.txt")))
	wantEdits := []string{"SKILL.md (modified)", "gone.txt (deleted)", "mine.txt (added)"}

	before := tree(t, s.Home)
	got := update(t, s, UpdateRequest{DryRun: true})
	if len(got) != 1 || got[0].Status != StatusWouldUpdate || got[0].NewSHA != newSHA || !reflect.DeepEqual(got[0].LocalEdits, wantEdits) {
		t.Fatalf("dry run = %+v; want would-update with %v", got, wantEdits)
	}
	got = update(t, s, UpdateRequest{Confirm: func(UpdatePlan) (bool, error) { return false, nil }})
	if len(got) != 1 || got[0].Status != StatusDeclined {
		t.Fatalf("declined = %+v", got)
	}
	after := tree(t, s.Home)
	delete(after, "skills/.tmp/")
	delete(before, "skills/.tmp/")
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("dry run / decline changed home:\n%v\n%v", keys(before), keys(after))
	}
	got = update(t, s, UpdateRequest{})
	if len(got) != 1 || got[0].Status != StatusUpdated {
		t.Fatalf("update = %+v", got)
	}
	files := tree(t, e.Path)
	if files["keep.txt"] != "k2" || files["gone.txt"] != "g" || files["mine.txt"] != "" || files["SKILL.md"] != skillMD("edit") {
		t.Errorf("local edits not discarded: %v", files)
	}
	assertConsistent(t, s)
}

func TestUpdateErrors(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("u")})
	s := newStore(t)
	mustAdd(t, s, repo.FileURL(), nil, buildPrep)

	repo.Commit(t, map[string]string{"SKILL.md": skillMD("u", "min_agent_version: 9.0.0")}, "needs new agent")
	before := tree(t, s.Home)
	_, err := NewPipeline(s).Update(context.Background(), UpdateRequest{AgentVersion: "0.5.0"}, buildPrep)
	if !errors.Is(err, manifest.ErrIncompatible) {
		t.Fatalf("Update = %v; want ErrIncompatible", err)
	}
	repo.Commit(t, map[string]string{"SKILL.md": "---\n- broken\n---\n"}, "broken")
	_, err = NewPipeline(s).Update(context.Background(), UpdateRequest{AgentVersion: "0.5.0"}, buildPrep)
	if !errors.Is(err, manifest.ErrInvalidManifest) {
		t.Fatalf("Update = %v; want ErrInvalidManifest", err)
	}
	repo.Commit(t, map[string]string{"SKILL.md": skillMD("u")}, "fixed")
	_, err = NewPipeline(s).Update(context.Background(), UpdateRequest{AgentVersion: "0.5.0"}, func(context.Context, *Staged) error { return errors.New("build broke") })
	if err == nil || !strings.Contains(err.Error(), "build broke") {
		t.Fatalf("Update = %v; want build error", err)
	}
	_, err = NewPipeline(s).Update(context.Background(), UpdateRequest{Names: []string{"nope"}}, nil)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Update nope = %v; want ErrNotFound", err)
	}
	after := tree(t, s.Home)
	delete(after, "skills/.tmp/")
	delete(before, "skills/.tmp/")
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("failed updates changed home:\n%v\n%v", keys(before), keys(after))
	}
	assertConsistent(t, s)
}
