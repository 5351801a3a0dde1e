package registry

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// syncScene is an AGENT_HOME whose sync has something of every kind to do:
// a and b move to a new commit, c is added, d is removed.
type syncScene struct {
	home     string
	lockPath string
	lock     *Lock
	before   map[string]Entry // installed before the sync
}

func newSyncScene(t *testing.T) *syncScene {
	t.Helper()
	files := map[string]string{}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+"/SKILL.md"] = skillMD(n)
		files[n+"/f"] = "old"
	}
	repo := gittest.NewRepo(t, files)
	s := newStore(t)
	for _, n := range []string{"a", "b", "d"} {
		mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = n }, buildPrep)
	}
	repo.Commit(t, map[string]string{"a/f": "new", "b/f": "new", "c/f": "new"}, "new")
	other := newStore(t)
	for _, n := range []string{"a", "b", "c"} {
		mustAdd(t, other, repo.FileURL(), func(r *AddRequest) { r.Skill = n }, buildPrep)
	}
	entries, _ := other.List()
	l, err := NewLock(entries)
	if err != nil {
		t.Fatal(err)
	}
	sc := &syncScene{home: s.Home, lockPath: filepath.Join(t.TempDir(), LockFileName), lock: l, before: map[string]Entry{}}
	if err := WriteLock(sc.lockPath, l); err != nil {
		t.Fatal(err)
	}
	installed, _ := s.List()
	for _, e := range installed {
		sc.before[e.Canonical] = e
	}
	return sc
}

// check asserts "old or new, never broken": the registry reads, every
// skill is either as before the sync or as locked, its folder hashes to
// its entry, and recovery left no leftovers. It returns how many skills
// were already new.
func (sc *syncScene) check(t *testing.T) int {
	t.Helper()
	s := NewStore(sc.home)
	entries := assertConsistent(t, s)
	byName := map[string]Entry{}
	for _, e := range entries {
		byName[e.Canonical] = e
	}
	newCount := 0
	for _, n := range []string{"a", "b", "c", "d"} {
		e, ok := byName[n]
		old, wasThere := sc.before[n]
		le, locked := sc.lock.Find(n)
		switch {
		case !ok && (wasThere && locked):
			t.Errorf("%s vanished: it was installed and is locked", n)
		case !ok:
			if locked {
				continue // c: not added yet
			}
			newCount++ // d: removed
		case wasThere && e.CommitSHA == old.CommitSHA && e.DirHash == old.DirHash:
		case locked && e.CommitSHA == le.Commit && e.DirHash == le.Hash:
			newCount++
		default:
			t.Errorf("%s is neither old nor new: %s %s", n, e.CommitSHA, e.DirHash)
		}
		if ok {
			if c, _, err := s.Verify(e, true); err != nil || !c.Empty() {
				t.Errorf("%s: folder does not match its entry: %+v %v", n, c, err)
			}
		}
	}
	return newCount
}

func startSync(t *testing.T, sc *syncScene, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"REGISTRY_TEST_HELPER=sync", "REGISTRY_HOME=" + sc.home, "REGISTRY_LOCK=" + sc.lockPath}, env...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// TestKilledSync stops sync at every step of each kind of change (add,
// move, remove; with and without RENAME_EXCHANGE): every skill is old or
// new, and the next sync finishes the job.
func TestKilledSync(t *testing.T) {
	t.Parallel()
	points := []string{"add:marked", "add:moved", "add:plugin", "update:staged", "update:swapped", "update:moved-old",
		"update:plugin", "update:committed", "remove:marked", "remove:committed", "registry:before-rename"}
	for _, at := range points {
		for _, noExch := range []bool{false, true} {
			if noExch != (at == "update:moved-old") && at != "update:staged" && at != "update:plugin" {
				continue
			}
			name := strings.ReplaceAll(at, ":", "-")
			env := []string{"REGISTRY_CRASH_AT=" + at}
			if noExch {
				name += "-no-exchange"
				env = append(env, "REGISTRY_NO_EXCHANGE=1")
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				sc := newSyncScene(t)
				code, out := runHelper(t, sc.home, "sync", append(env, "REGISTRY_LOCK="+sc.lockPath)...)
				if code != helperExit {
					t.Fatalf("sync was not stopped at %s: exit %d: %s", at, code, out)
				}
				sc.check(t)
				if code, out := runHelper(t, sc.home, "sync", "REGISTRY_LOCK="+sc.lockPath); code != 0 {
					t.Fatalf("sync after the kill: exit %d: %s", code, out)
				}
				if got := sc.check(t); got != 4 {
					t.Fatalf("after a full sync %d of 4 skills are as locked", got)
				}
			})
		}
	}
}

// syncKills is how many real SIGKILLs TestSyncSurvivesSIGKILL sends; the
// reliability build tag raises it (lock_reliability_test.go).
var syncKills = 6

// TestSyncSurvivesSIGKILL kills a running sync with SIGKILL at random
// moments across its whole run: every skill is old or new and the
// registry valid, and the next sync completes.
func TestSyncSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	res := syncSIGKILL(t, syncKills)
	t.Logf("RESULT SyncSIGKILL: %s", res)
}

func syncSIGKILL(t *testing.T, kills int) string {
	t.Helper()
	// The fastest of three uninterrupted syncs: the kills are spread over
	// it, so that most land while the sync runs.
	var fastest time.Duration
	for range 3 {
		sc := newSyncScene(t)
		start := time.Now()
		if code, out := runHelper(t, sc.home, "sync", "REGISTRY_LOCK="+sc.lockPath); code != 0 {
			t.Fatalf("sync: exit %d: %s", code, out)
		}
		if d := time.Since(start); fastest == 0 || d < fastest {
			fastest = d
		}
	}
	finished := 0
	states := map[string]int{} // of the killed runs: before, part-way, after
	for i := range kills {
		sc := newSyncScene(t)
		cmd := startSync(t, sc)
		time.Sleep(time.Duration(rand.Int64N(int64(fastest) + 1)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
		signaled := ok && ws.Signaled()
		if !signaled && err != nil {
			t.Fatalf("kill %d: sync failed on its own: %v", i, err)
		}
		n := sc.check(t)
		switch {
		case !signaled:
			finished++
		case n == 0:
			states["before"]++
		case n == 4:
			states["after"]++
		default:
			states["part-way"]++
		}
		if t.Failed() {
			t.FailNow()
		}
		if code, out := runHelper(t, sc.home, "sync", "REGISTRY_LOCK="+sc.lockPath); code != 0 {
			t.Fatalf("kill %d: sync after the kill: exit %d: %s", i, code, out)
		}
		if n := sc.check(t); n != 4 {
			t.Fatalf("kill %d: after a full sync %d of 4 skills are as locked", i, n)
		}
	}
	killed := kills - finished
	return fmt.Sprintf("%d runs (kill within the fastest uninterrupted sync, %v): %d killed by SIGKILL (%d before any change, %d part-way, %d with all 4 changes made), %d finished first; 0 broken, %d of %d completed by the next sync",
		kills, fastest.Round(time.Millisecond), killed, states["before"], states["part-way"], states["after"], finished, kills, kills)
}

// TestKilledRollback stops rollback at each step of its swap: the skill is
// at its current or its previous commit, its folder matches its entry,
// and the next rollback completes.
func TestKilledRollback(t *testing.T) {
	t.Parallel()
	for _, at := range []string{"update:staged", "update:swapped", "update:plugin", "registry:before-rename", "update:committed"} {
		t.Run(strings.ReplaceAll(at, ":", "-"), func(t *testing.T) {
			t.Parallel()
			repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("r"), "f": "1"})
			s := newStore(t)
			v1 := mustAdd(t, s, repo.FileURL(), nil, buildPrep)
			repo.Commit(t, map[string]string{"f": "2"}, "2")
			update(t, s, UpdateRequest{Names: []string{"r"}})
			v2, _ := s.Get("r")
			code, out := runHelper(t, s.Home, "rollback", "REGISTRY_SKILL=r", "REGISTRY_CRASH_AT="+at)
			if code != helperExit {
				t.Fatalf("rollback was not stopped at %s: exit %d: %s", at, code, out)
			}
			after := NewStore(s.Home)
			entries := assertConsistent(t, after)
			e := entries[0]
			if !(e.CommitSHA == v2.CommitSHA && e.DirHash == v2.DirHash) && !(e.CommitSHA == v1.CommitSHA && e.DirHash == v1.DirHash) {
				t.Fatalf("after the kill r is at %s %s: neither current nor previous", e.CommitSHA, e.DirHash)
			}
			if c, _, err := after.Verify(e, true); err != nil || !c.Empty() {
				t.Fatalf("folder does not match the entry: %+v %v", c, err)
			}
			if code, out := runHelper(t, s.Home, "rollback", "REGISTRY_SKILL=r"); code != 0 {
				t.Fatalf("rollback after the kill: exit %d: %s", code, out)
			}
			assertConsistent(t, after)
		})
	}
}
