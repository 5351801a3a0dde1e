//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/agentskills/agent/host"
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
// a success or a structured plugin_crashed error, every crash must be
// followed by a fresh process, and the host must end with no children,
// zombies or leaked descriptors.
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
		Env:    host.FilterEnv(os.Environ(), nil),
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
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	children := 0
	for _, p := range procs() {
		if p.PPID == os.Getpid() {
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
	result("crash-soak", "%d calls: %d ok, %d panics and %d exits each returned plugin_crashed, %d other errors; %d plugin process starts, %d successful calls right after a crash all ran in a new process; after Close: %d children, %d new zombies, fds %d->%d, goroutines %d->%d",
		calls, ok, panics, exits, other, starts, restarts, children, len(zombies), fdBefore, fdAfter, gBefore, gAfter)
}
