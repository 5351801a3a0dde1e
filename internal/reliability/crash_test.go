//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestReliabilityCrashConsistency SIGKILLs `agent skill add` and
// `agent skill update` of a Go-plugin skill at random moments, 50 times.
// Three trials in five pick a uniformly random delay up to the
// shortest uninterrupted run of the command seen so far; the other two kill 0-3 ms after the command starts
// its commit (its marker appears in skills/.tmp, seen through inotify).
// After each kill: `agent skill list` works; every listed skill loads and
// its tool runs the version the registry names; an interrupted update left
// the old or the new version, never a mix; and after the next command
// (the list) no temp files or stray folders remain.
func TestReliabilityCrashConsistency(t *testing.T) {
	const trials = 50
	repo := newSkillRepo(t, nil)
	home := filepath.Join(t.TempDir(), "home")
	environ := env(home)
	must(t, environ, "skill", "add", repo.FileURL(), "scripty", "--trust")

	// Calibrate: how long an uninterrupted add and update take here.
	t0 := time.Now()
	must(t, environ, "skill", "add", repo.FileURL(), "crashy", "--trust")
	dAdd := time.Since(t0)
	repo.bump(t, "1.1.0")
	t0 = time.Now()
	must(t, environ, "skill", "update", "crashy", "--yes")
	dUpd := time.Since(t0)
	checkLoads(t, environ, repo, home)

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	tmpDir := filepath.Join(home, "skills", ".tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var (
		completed, addCommitted, addRolledBack, updNew, updOld int
		markerKills, timedKills, strayProcs, problems          int
	)
	for k := 0; k < trials; k++ {
		isAdd := k%2 == 0
		es, err := readRegistry(home)
		if err != nil {
			t.Fatal(err)
		}
		old, have := find(es, "crashy")
		var args []string
		var newSHA string
		if isAdd {
			if have {
				must(t, environ, "skill", "remove", "crashy", "--yes")
			}
			args = []string{"skill", "add", repo.FileURL(), "crashy", "--trust"}
		} else {
			if !have {
				must(t, environ, "skill", "add", repo.FileURL(), "crashy", "--trust")
				es, _ = readRegistry(home)
				old, _ = find(es, "crashy")
			}
			newSHA = repo.bump(t, fmt.Sprintf("1.%d.0", k+2))
			args = []string{"skill", "update", "crashy", "--yes"}
		}

		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd, stdout, stderr := agentCmd(ctx, environ, "", args...)
		var stop func()
		atMarker := k%5 >= 3
		if atMarker {
			prefix := "crashy.add."
			if !isAdd {
				prefix = "crashy.new."
			}
			stop = killOnCreate(t, tmpDir, prefix, func() {
				time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
				_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			})
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started := time.Now()
		if !atMarker {
			d := dAdd
			if !isAdd {
				d = dUpd
			}
			// Uniform over the shortest uninterrupted run seen so far, so
			// that almost every timed kill lands inside the command.
			delay := time.Duration(rng.Int64N(int64(d)))
			timer := time.AfterFunc(delay, func() { _ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL) })
			stop = func() { timer.Stop() }
		}
		_ = cmd.Wait()
		stop()
		cancel()
		r := finished(cmd, args, stdout, stderr)
		switch {
		case r.Code == 0:
			completed++
			if took := time.Since(started); isAdd && took < dAdd {
				dAdd = took
			} else if !isAdd && took < dUpd {
				dUpd = took
			}
		case r.Code != -1:
			problems++
			t.Errorf("trial %d: the command failed on its own: %v", k, r)
		case atMarker:
			markerKills++
		default:
			timedKills++
		}
		// The kill leaves the agent's children (go build) running; let
		// them finish so that the next trial starts from a quiet machine.
		strayProcs += drainGroup(cmd.Process.Pid)

		// The state must be usable right away, by a reader.
		list := agent(t, environ, "skill", "list", "--json")
		if list.Code != 0 {
			problems++
			t.Errorf("trial %d: skill list after the kill: %v", k, list)
			continue
		}
		es, err = readRegistry(home)
		if err != nil {
			problems++
			t.Errorf("trial %d: %v", k, err)
			continue
		}
		now, has := find(es, "crashy")
		switch {
		case isAdd && has:
			addCommitted++
		case isAdd:
			addRolledBack++
		case !has:
			problems++
			t.Errorf("trial %d: the interrupted update removed crashy", k)
		case now.CommitSHA == newSHA:
			updNew++
		case now.CommitSHA == old.CommitSHA:
			updOld++
		default:
			problems++
			t.Errorf("trial %d: crashy at %s, neither old %s nor new %s", k, now.CommitSHA, old.CommitSHA, newSHA)
		}
		// The next command, even a reader like list, cleaned up what the
		// kill left behind.
		before := t.Failed()
		checkHome(t, home)
		if !before && t.Failed() {
			problems++
			t.Errorf("trial %d (%s, %s): leftovers after the next command (skill list)", k, args[1], map[bool]string{true: "marker", false: "timed"}[atMarker])
		}
		if !checkLoads(t, environ, repo, home) {
			problems++
		}
		// A writer afterwards finds nothing to trip over.
		must(t, environ, "skill", "trust", "scripty")
		checkHome(t, home)
		if problems > 5 {
			t.FailNow()
		}
	}
	result("crash-consistency", "%d trials (%d add, %d update; %d killed at a random time, %d killed 0-3 ms after the commit marker, %d finished before the kill): add committed %d / rolled back %d, update kept old %d / moved to new %d; %d trials with a problem; %d child processes (go build) outlived the killed agent and finished on their own; shortest uninterrupted add %.1fs, update %.1fs",
		trials, (trials+1)/2, trials/2, timedKills, markerKills, completed, addCommitted, addRolledBack, updOld, updNew, problems, strayProcs, dAdd.Seconds(), dUpd.Seconds())
}

func find(es []entry, name string) (entry, bool) {
	for _, e := range es {
		if e.Canonical == name {
			return e, true
		}
	}
	return entry{}, false
}

// checkLoads calls a tool of every installed skill: crashy must report the
// version that its recorded commit holds; scripty's script must run.
func checkLoads(t testing.TB, environ []string, repo *skillRepo, home string) bool {
	t.Helper()
	es, err := readRegistry(home)
	if err != nil {
		t.Error(err)
		return false
	}
	ok := true
	for _, e := range es {
		var r run
		switch e.Canonical {
		case "crashy":
			r = agent(t, environ, "call", "crashy.version")
		case "scripty":
			r = agent(t, environ, "call", "script_run", `{"skill_name":"scripty","script_name":"hello"}`)
		default:
			continue
		}
		var c callResult
		if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil || !c.Success {
			t.Errorf("skill %s at %s does not load: %v", e.Canonical, e.CommitSHA, r)
			ok = false
			continue
		}
		if e.Canonical == "crashy" {
			var v string
			_ = json.Unmarshal(c.Result, &v)
			if want := repo.versions[e.CommitSHA]; v != want {
				t.Errorf("crashy is recorded at %s (version %s) but its plugin is version %q", e.CommitSHA, want, v)
				ok = false
			}
		}
	}
	return ok
}

// drainGroup waits for the rest of process group pgid to exit on its own
// and returns how many members there were; after 60 s it kills them.
func drainGroup(pgid int) int {
	seen := map[int]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := groupMembers(pgid)
		for _, p := range left {
			seen[p.PID] = true
		}
		if len(left) == 0 {
			return len(seen)
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return len(seen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killOnCreate watches dir and calls kill once, when an entry whose name
// starts with prefix is created or moved in. The returned func stops the
// watch.
func killOnCreate(t testing.TB, dir, prefix string, kill func()) func() {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Fatalf("inotify: %v", err)
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CREATE|unix.IN_MOVED_TO); err != nil {
		unix.Close(fd)
		t.Fatalf("inotify watch %s: %v", dir, err)
	}
	f := os.NewFile(uintptr(fd), "inotify") // pollable: Close unblocks Read
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64*1024)
		for {
			n, err := f.Read(buf)
			if err != nil {
				if !errors.Is(err, os.ErrClosed) {
					t.Logf("inotify read: %v", err)
				}
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
				off += unix.SizeofInotifyEvent + int(ev.Len)
				if strings.HasPrefix(name, prefix) {
					kill()
					return
				}
			}
		}
	}()
	return func() {
		f.Close()
		<-done
	}
}
