package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// Tests that need separate processes re-execute the test binary with
// REGISTRY_TEST_HELPER set; TestMain then runs one store operation instead
// of the tests.
func TestMain(m *testing.M) {
	if op := os.Getenv("REGISTRY_TEST_HELPER"); op != "" {
		os.Exit(helperMain(op))
	}
	os.Exit(m.Run())
}

// helperExit is the exit code of a simulated kill.
const helperExit = 99

func helperMain(op string) int {
	s := NewStore(os.Getenv("REGISTRY_HOME"))
	if at := os.Getenv("REGISTRY_CRASH_AT"); at != "" {
		s.hook = func(point string) {
			if point == at {
				os.Exit(helperExit) // like SIGKILL: no deferred cleanup runs
			}
		}
	}
	if os.Getenv("REGISTRY_NO_EXCHANGE") != "" {
		s.exchange = func(a, b string) error { return errors.ErrUnsupported }
	}
	ctx := context.Background()
	var err error
	switch op {
	case "add":
		var src gitsrc.Source
		if src, err = gitsrc.ParseSource(os.Getenv("REGISTRY_SOURCE")); err == nil {
			_, err = NewPipeline(s).Add(ctx, AddRequest{Source: src, Skill: os.Getenv("REGISTRY_SKILL"), Trusted: true}, buildPrep)
		}
	case "update":
		_, err = NewPipeline(s).Update(ctx, UpdateRequest{All: true}, buildPrep)
	case "remove":
		_, err = s.Remove(ctx, os.Getenv("REGISTRY_SKILL"))
	case "rollback": // lock_process_test.go
		_, err = NewPipeline(s).Rollback(ctx, RollbackRequest{Name: os.Getenv("REGISTRY_SKILL")}, buildPrep)
	case "sync": // lock_process_test.go
		var l *Lock
		if l, err = ReadLock(os.Getenv("REGISTRY_LOCK")); err == nil {
			_, err = NewPipeline(s).Sync(ctx, l, SyncRequest{Trust: func([]string) (bool, error) { return true, nil }}, buildPrep)
		}
	default:
		err = fmt.Errorf("unknown op %q", op)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func runHelper(t *testing.T, home, op string, env ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"REGISTRY_TEST_HELPER=" + op, "REGISTRY_HOME=" + home}, env...)...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatalf("run helper: %v", err)
	}
	return 0, string(out)
}

// TestConcurrentAddProcesses: 20 processes adding different skills into one
// AGENT_HOME yield 20 entries and a valid registry.json (SPEC §12).
func TestConcurrentAddProcesses(t *testing.T) {
	t.Parallel()
	const n = 20
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = skillMD(fmt.Sprintf("s%02d", i))
	}
	repo := gittest.NewRepo(t, files)
	home := filepath.Join(t.TempDir(), "home")
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, out := runHelper(t, home, "add", "REGISTRY_SOURCE="+repo.FileURL(), fmt.Sprintf("REGISTRY_SKILL=s%02d", i)); code != 0 {
				errs[i] = fmt.Sprintf("add s%02d: exit %d: %s", i, code, out)
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	data, err := os.ReadFile(filepath.Join(home, "skills", "registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rf registryFile
	if err := json.Unmarshal(data, &rf); err != nil {
		t.Fatalf("registry.json is not valid JSON: %v", err)
	}
	if len(rf.Skills) != n {
		t.Fatalf("registry has %d entries; want %d", len(rf.Skills), n)
	}
	assertConsistent(t, NewStore(home))
}

// TestConcurrentAddGoroutines is the in-process variant (runs under -race).
func TestConcurrentAddGoroutines(t *testing.T) {
	t.Parallel()
	const n = 8
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("g%d/SKILL.md", i)] = skillMD(fmt.Sprintf("g%d", i))
	}
	repo := gittest.NewRepo(t, files)
	s := newStore(t)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src, _ := gitsrc.ParseSource(repo.FileURL())
			if _, err := NewPipeline(s).Add(context.Background(), AddRequest{Source: src, Skill: fmt.Sprintf("g%d", i)}, buildPrep); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := assertConsistent(t, s); len(got) != n {
		t.Fatalf("%d entries; want %d", len(got), n)
	}
}

// entryBefore reads name's entry straight from registry.json, without the
// recovery that List does.
func entryBefore(t *testing.T, s *Store, name string) (Entry, bool) {
	t.Helper()
	entries, err := s.read()
	if err != nil {
		t.Fatal(err)
	}
	e, err := find(entries, name)
	return e, err == nil
}

// TestKilledRuns kills add, update and remove at each step of their commit
// and checks that readers still see a working old state, and that the next
// writer cleans up.
func TestKilledRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		op, at  string
		noExch  bool   // simulate a file system without RENAME_EXCHANGE
		wantSHA string // "" = not installed; "old" or "new" commit
	}{
		{op: "add", at: "add:marked"},
		{op: "add", at: "add:moved"},
		{op: "add", at: "add:plugin"},
		{op: "add", at: "registry:before-rename"},
		{op: "update", at: "update:staged", wantSHA: "old"},
		{op: "update", at: "update:swapped", wantSHA: "old"},
		{op: "update", at: "update:plugin", wantSHA: "old"},
		{op: "update", at: "registry:before-rename", wantSHA: "old"},
		{op: "update", at: "update:committed", wantSHA: "new"},
		{op: "update", at: "update:staged", noExch: true, wantSHA: "old"},
		{op: "update", at: "update:moved-old", noExch: true, wantSHA: "old"},
		{op: "update", at: "update:plugin", noExch: true, wantSHA: "old"},
		{op: "update", at: "update:committed", noExch: true, wantSHA: "new"},
		{op: "remove", at: "remove:marked", wantSHA: "old"},
		{op: "remove", at: "registry:before-rename", wantSHA: "old"},
		{op: "remove", at: "remove:committed"},
	}
	for _, tt := range tests {
		name := strings.ReplaceAll(tt.op+"-"+tt.at, ":", "-")
		if tt.noExch {
			name += "-no-exchange"
		}
		// Each reader that repairs is tested alone, so that one cannot
		// hide that the other serves the kill's mix.
		for _, reader := range []string{"List", "LoadInstalled"} {
			t.Run(name+"/"+reader, func(t *testing.T) {
				t.Parallel()
				killedRun(t, tt.op, tt.at, tt.noExch, tt.wantSHA, reader)
			})
		}
	}
}

// killedRun kills op at the point at in a child process, then reads with
// reader first: List (which Get shares) or LoadInstalled with the entry
// as the kill left it.
func killedRun(t *testing.T, op, at string, noExch bool, wantSHA, reader string) {
	repo := gittest.NewRepo(t, map[string]string{"k/SKILL.md": skillMD("k"), "other/SKILL.md": skillMD("other")})
	first := repo.Head(t)
	s := newStore(t)
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "other" }, buildPrep)
	if op != "add" {
		mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "k" }, buildPrep)
	}
	second := repo.Commit(t, map[string]string{"k/SKILL.md": skillMD("k", "version: 2.0.0")}, "v2")
	env := []string{"REGISTRY_SOURCE=" + repo.FileURL(), "REGISTRY_SKILL=k", "REGISTRY_CRASH_AT=" + at}
	if noExch {
		env = append(env, "REGISTRY_NO_EXCHANGE=1")
		s.exchange = func(a, b string) error { return errors.ErrUnsupported }
	}
	code, out := runHelper(t, s.Home, op, env...)
	if code != helperExit {
		t.Fatalf("helper exit %d (want the simulated kill %d): %s", code, helperExit, out)
	}
	want := map[string]string{"": "", "old": first, "new": second}[wantSHA]
	// check lists the skills and reads each folder as it is on disk (not
	// through LoadInstalled, which would repair it): the folder must hold
	// the version its entry names, and every file must hash to what the
	// entry records.
	check := func(stage string) {
		t.Helper()
		entries, err := s.List()
		if err != nil {
			t.Fatalf("%s: List: %v", stage, err)
		}
		got := ""
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(e.Path, "SKILL.md")); err != nil {
				t.Errorf("%s: entry %s has no SKILL.md: %v", stage, e.Canonical, err)
			}
			if e.Plugin != nil {
				if _, err := os.Stat(e.Plugin.Path); err != nil {
					t.Errorf("%s: entry %s plugin missing", stage, e.Canonical)
				}
			}
			if e.Canonical != "k" {
				continue
			}
			got = e.CommitSHA
			m, _, err := gitsrc.LoadManifest(e.Path)
			if err != nil {
				t.Fatalf("%s: the folder's SKILL.md: %v", stage, err)
			}
			if wantV := map[bool]string{true: "2.0.0", false: ""}[got == second]; m.Version != wantV {
				t.Errorf("%s: folder holds version %q but registry says %s", stage, m.Version, got)
			}
			// The old hash never serves the new files (SPEC §12).
			if err := s.CheckIntegrity(e); err != nil {
				t.Errorf("%s: the folder does not match the entry's hash: %v", stage, err)
			}
			if _, _, err := LoadInstalled(e); err != nil {
				t.Errorf("%s: LoadInstalled: %v", stage, err)
			}
		}
		if got != want {
			t.Errorf("%s: k at %q; want %q", stage, got, want)
		}
	}
	if reader == "LoadInstalled" {
		// A reader holding the entry as the kill left it still loads a
		// SKILL.md of the version it names: LoadInstalled waits for the
		// lock and recovers on a mismatch.
		if old, ok := entryBefore(t, s, "k"); ok {
			m, _, err := LoadInstalled(old)
			if err != nil {
				t.Fatalf("LoadInstalled with the entry as the kill left it: %v", err)
			}
			if wantV := map[bool]string{true: "2.0.0", false: ""}[old.CommitSHA == second]; m.Version != wantV {
				t.Errorf("LoadInstalled served version %q for an entry at %s", m.Version, old.CommitSHA)
			}
		}
	}
	check("after kill (" + reader + " recovers)")
	// The next writer recovers.
	if _, err := s.SetTrusted("other", false); err != nil {
		t.Fatal(err)
	}
	check("after recovery")
	assertConsistent(t, s)
}
