//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/isolation/cgroup"
	"github.com/agentskills/agent/sdk"
)

// fate is testdata/crashy's: "exit" for 1% of inputs, "panic" for 10%.
func fate(i int) string {
	x := uint64(i) * 0x9E3779B97F4A7C15
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	switch r := x % 100; {
	case r == 0:
		return "exit"
	case r <= 10:
		return "panic"
	}
	return "ok"
}

// TestReliabilityCrashSoak makes 10,000 calls through the host to a plugin
// that panics on 10% of them and exits on 1%. Every call must come back as
// a success or a structured plugin_crashed error, and every crash must be
// followed by a fresh process. Then 20 calls hang past their deadline
// (timeout, then a fresh process), and 8 goroutines make 2,000 more calls
// at once while the plugin keeps crashing. The host must end with no
// children, zombies or leaked descriptors.
func TestReliabilityCrashSoak(t *testing.T) {
	const calls = 10000
	zBefore := zombieSet()
	fdBefore := fdCount()
	gBefore := runtime.NumGoroutine()

	h := host.New(host.WithStateDir(t.TempDir()))
	h.Register(host.Plugin{
		Name:   "crashy",
		Path:   crashyBin,
		SHA256: fileSHA(t, crashyBin),
		Env:    host.FilterEnv(os.Environ(), nil, nil),
	})
	var ok, panics, exits, other int
	pids := map[int]bool{}
	lastPID, crashedBefore, restarts, starts := 0, false, 0, 0
	for i := 0; i < calls; i++ {
		before := h.PID("crashy")
		if before == 0 {
			starts++
		} else if crashedBefore {
			t.Fatalf("call %d: the crashed plugin is still registered as running (pid %d)", i, before)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := h.Invoke(ctx, "crashy", "work", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)))
		cancel()
		want := fate(i)
		var se *sdk.Error
		switch {
		case err == nil:
			var out struct{ I, PID int }
			if jerr := json.Unmarshal(res.Value, &out); jerr != nil || out.I != i {
				t.Fatalf("call %d: result %s (%v)", i, res.Value, jerr)
			}
			if want != "ok" {
				t.Fatalf("call %d should have crashed (%s) but returned %s", i, want, res.Value)
			}
			ok++
			if crashedBefore {
				if out.PID == lastPID || pids[out.PID] {
					t.Fatalf("call %d after a crash ran in old process %d", i, out.PID)
				}
				restarts++
			}
			pids[out.PID] = true
			lastPID, crashedBefore = out.PID, false
		case errors.As(err, &se) && se.Code == sdk.CodePluginCrashed:
			switch want {
			case "panic":
				panics++
			case "exit":
				exits++
			default:
				t.Fatalf("call %d should have succeeded: %v", i, err)
			}
			crashedBefore = true
		default:
			other++
			t.Errorf("call %d (%s): unstructured or unexpected error %T: %v", i, want, err, err)
			if other > 10 {
				t.FailNow()
			}
		}
	}
	// Hangs: a call past its deadline costs one timeout error and is
	// canceled in the plugin. A handler that stops keeps its plugin (the
	// next call runs in the same process); one that ignores the cancel
	// gets its plugin killed after host.CancelGrace, and the next call
	// runs in a new process.
	const hangs = 20
	timeouts, kept, replaced := 0, 0, 0
	for k := 0; k < hangs; k++ {
		ignore := k%2 == 1
		before := h.PID("crashy")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := h.Invoke(ctx, "crashy", "hang", json.RawMessage(fmt.Sprintf(`{"ignore_cancel":%t}`, ignore)))
		cancel()
		var se *sdk.Error
		if !errors.As(err, &se) || se.Code != sdk.CodeTimeout {
			t.Fatalf("hang %d: want a timeout error, got %T %v", k, err, err)
		}
		timeouts++
		if ignore {
			// The bound only turns a plugin that is never killed into a
			// failure instead of a hang.
			for deadline := time.Now().Add(30 * time.Second); h.PID("crashy") == before; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("hang %d: the plugin ignoring the cancel was not killed", k)
				}
			}
		}
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		res, err := h.Invoke(ctx, "crashy", "work", json.RawMessage(`{"i":1}`))
		cancel()
		var out struct{ PID int }
		if err != nil || json.Unmarshal(res.Value, &out) != nil {
			t.Fatalf("call after hang %d: %v", k, err)
		}
		switch {
		case !ignore && out.PID == before:
			kept++
		case ignore && !pids[out.PID]:
			replaced++
		default:
			t.Fatalf("call after hang %d (ignore_cancel=%t) ran in pid %d, before %d", k, ignore, out.PID, before)
		}
		pids[out.PID] = true
	}
	// Concurrent callers share one plugin while it keeps crashing: every
	// call still ends in a result or a structured error.
	const workers, perWorker = 8, 250
	var mu sync.Mutex
	conc := map[string]int{}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < perWorker; k++ {
				i := calls + w*perWorker + k
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := h.Invoke(ctx, "crashy", "work", json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)))
				cancel()
				var se *sdk.Error
				key := "ok"
				switch {
				case err == nil && fate(i) != "ok":
					key = "crash-fated call succeeded"
				case err == nil:
				case errors.As(err, &se):
					key = se.Code
				default:
					key = "unstructured"
					t.Errorf("concurrent call %d: %T %v", i, err, err)
				}
				mu.Lock()
				conc[key]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if conc["unstructured"] > 0 || conc["crash-fated call succeeded"] > 0 {
		t.Errorf("concurrent phase: %v", conc)
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	children := 0
	for _, p := range procs() {
		// The cgroup watcher lives as long as this process, by design: it
		// empties the session's cgroups when the process is gone.
		if p.PPID == os.Getpid() && p.PID != cgroup.WatcherPID() {
			children++
			t.Errorf("child process left after Close: %v", p)
		}
	}
	zombies := newZombies(zBefore)
	for _, z := range zombies {
		t.Errorf("new zombie: %v", z)
	}
	// Let finished goroutines of the last process drain before counting.
	var fdAfter, gAfter int
	for try := 0; try < 50; try++ {
		fdAfter, gAfter = fdCount(), runtime.NumGoroutine()
		if fdAfter <= fdBefore+2 && gAfter <= gBefore+5 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if fdAfter > fdBefore+2 {
		t.Errorf("file descriptors: %d before, %d after %d restarts", fdBefore, fdAfter, restarts)
	}
	if gAfter > gBefore+5 {
		t.Errorf("goroutines: %d before, %d after", gBefore, gAfter)
	}
	// Every call after a crash starts a new process: one start for the
	// first call plus one per crash, except after a crash on the last call.
	wantStarts := 1 + panics + exits
	if crashedBefore {
		wantStarts--
	}
	if starts != wantStarts {
		t.Errorf("%d crashes but %d process starts (want %d)", panics+exits, starts, wantStarts)
	}
	result("crash-soak", "%d sequential calls: %d ok, %d panics and %d exits each returned plugin_crashed, %d other errors; %d plugin process starts, %d successful calls right after a crash all ran in a new process; %d hung calls each returned timeout (%d stopped when canceled and kept their process, %d ignored it and were killed after the grace period, the next call in a new process); %d concurrent calls from %d goroutines: %d ok, %d plugin_crashed, %d other structured, %d unstructured; after Close: %d children, %d new zombies, fds %d->%d, goroutines %d->%d",
		calls, ok, panics, exits, other, starts, restarts, timeouts, kept, replaced, workers*perWorker, workers, conc["ok"], conc[sdk.CodePluginCrashed],
		workers*perWorker-conc["ok"]-conc[sdk.CodePluginCrashed]-conc["unstructured"]-conc["crash-fated call succeeded"], conc["unstructured"], children, len(zombies), fdBefore, fdAfter, gBefore, gAfter)
}
