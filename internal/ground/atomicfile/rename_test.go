package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// errHeld stands for Windows' ERROR_SHARING_VIOLATION, which Linux never
// returns: heldDir refuses the first renames with it.
var errHeld = errors.New("the target is open in another process")

// heldDir is a real folder whose first `held` renames fail with errHeld,
// then with fail if set.
type heldDir struct {
	osDir
	held  int
	fail  error
	tries *int
}

func (d heldDir) Rename(oldname, newname string) error {
	*d.tries++
	if *d.tries <= d.held {
		return errHeld
	}
	if d.fail != nil {
		return d.fail
	}
	return d.osDir.Rename(oldname, newname)
}

// TestRenameRetry runs Write's own rename (the seam, with Windows'
// heldOpen replaced by one that knows errHeld) over a real folder whose
// renames are refused a few times, or for good.
func TestRenameRetry(t *testing.T) {
	errOther := errors.New("disk full")
	ms := time.Millisecond
	tests := []struct {
		name       string
		held       int
		fail       error
		wantErr    error
		wantTries  int
		wantSleeps []time.Duration // nil: check only their sum
	}{
		{name: "free at once", wantTries: 1, wantSleeps: []time.Duration{}},
		{name: "held three times", held: 3, wantTries: 4, wantSleeps: []time.Duration{ms, 2 * ms, 4 * ms}},
		{name: "held long: waits double up to 250ms", held: 11, wantTries: 12,
			wantSleeps: []time.Duration{ms, 2 * ms, 4 * ms, 8 * ms, 16 * ms, 32 * ms, 64 * ms, 128 * ms, 250 * ms, 250 * ms, 250 * ms}},
		{name: "held for good: gives up after the budget", held: 1 << 30, wantErr: errHeld},
		{name: "another error is not retried", fail: errOther, wantErr: errOther, wantTries: 1, wantSleeps: []time.Duration{}},
		{name: "held, then another error", held: 2, fail: errOther, wantErr: errOther, wantTries: 3, wantSleeps: []time.Duration{ms, 2 * ms}},
	}
	savedHeld, savedSleep := heldOpen, sleep
	t.Cleanup(func() { heldOpen, sleep = savedHeld, savedSleep })
	heldOpen = func(err error) bool { return errors.Is(err, errHeld) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var slept []time.Duration
			sleep = func(d time.Duration) { slept = append(slept, d) }
			dir := t.TempDir()
			path := filepath.Join(dir, "registry.json")
			writeOld(t, path, "old", 0o644)
			tries := 0
			err := write(heldDir{held: tt.held, fail: tt.fail, tries: &tries}, path, []byte("new"), 0o644, nil)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("write = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil {
				assertFile(t, path, "new", 0o644)
			} else {
				assertFile(t, path, "old", 0o644)
			}
			assertOnly(t, dir, "registry.json")
			var total time.Duration
			for _, d := range slept {
				total += d
			}
			if tt.wantSleeps != nil {
				if tries != tt.wantTries || !slices.Equal(slept, tt.wantSleeps) {
					t.Errorf("tries %d, sleeps %v; want %d, %v", tries, slept, tt.wantTries, tt.wantSleeps)
				}
				return
			}
			// Held for good: the waits add up to the budget, give or take
			// the last one, and the last try came after the last wait.
			if total < renameBudget || total > renameBudget+250*ms || tries != len(slept)+1 {
				t.Errorf("slept %v in %d waits over %d tries; want about %v, one try more than waits", total, len(slept), tries, renameBudget)
			}
		})
	}
}

// TestRenameHeldOpenHere: on Unix a rename over an open file is not
// refused, and nothing is waited for.
func TestRenameHeldOpenHere(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows refuses a rename over a file open without FILE_SHARE_DELETE: TestRenameRetry covers the waiting")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "registry.json")
	writeOld(t, path, "old", 0o644)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Write(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertFile(t, path, "new", 0o644)
	if renameHeldOpen(errHeld) {
		t.Error("renameHeldOpen accepts an error that is not Windows'")
	}
}
