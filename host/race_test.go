//go:build unix

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/sdk"
)

// raceCalls is how many one-shot launches race the writer in `go test`;
// the reliability suite runs 2,000 through the agent binary.
const raceCalls = 100

// TestWriterRacingLaunchNeverRuns: while a writer keeps swapping the
// plugin for code that leaves a marker (in place, same inode; or by
// rename), launch after launch in fresh hosts either runs the recorded
// plugin or refuses with ErrTampered. The swapped code never runs.
func TestWriterRacingLaunchNeverRuns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		plugin func(t *testing.T) (path string, good []byte)
		swap   func(path string, good, evil []byte) // one swap and back
	}{
		{
			name: "binary rewritten in place",
			plugin: func(t *testing.T) (string, []byte) {
				p := copyPlugin(t)
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				return p, b
			},
			swap: func(path string, good, evil []byte) {
				f, err := os.OpenFile(path, os.O_WRONLY, 0)
				if err != nil {
					return
				}
				_, _ = f.WriteAt(evil, 0)
				_, _ = f.WriteAt(good[:len(evil)], 0)
				_ = f.Close()
			},
		},
		{
			name: "#! plugin swapped by rename",
			plugin: func(t *testing.T) (string, []byte) {
				p := filepath.Join(t.TempDir(), "run.sh")
				b := []byte("#!/bin/sh\nexec " + testPlugin + " \"$@\"\n")
				if err := os.WriteFile(p, b, 0o755); err != nil {
					t.Fatal(err)
				}
				return p, b
			},
			swap: func(path string, good, evil []byte) {
				for _, b := range [][]byte{evil, good} {
					tmp := path + ".tmp"
					if os.WriteFile(tmp, b, 0o755) == nil {
						_ = os.Rename(tmp, path)
					}
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, good := tc.plugin(t)
			sum := fileSHA(t, path)
			marker := filepath.Join(t.TempDir(), "swapped-code-ran")
			evil := []byte("#!/bin/sh\necho >>" + marker + "\nexit 0\n")
			state := t.TempDir()

			stop := make(chan struct{})
			var wg sync.WaitGroup
			var swaps atomic.Int64
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					tc.swap(path, good, evil)
					swaps.Add(1)
				}
			}()
			var ran, refused int
			for range raceCalls {
				h := New(WithLogger(testLogger(nil, hclog.Info)), WithStateDir(state), WithStartTimeout(20e9))
				h.Register(Plugin{Name: "raced", Path: path, SHA256: sum})
				_, err := h.Invoke(context.Background(), "raced", "echo", json.RawMessage(`{"text":"x"}`))
				_ = h.Close()
				switch {
				case err == nil:
					ran++
				case errors.Is(err, ErrTampered):
					refused++
				default:
					t.Errorf("launch failed otherwise: %v", err)
				}
			}
			close(stop)
			wg.Wait()
			if err := os.WriteFile(path, good, 0o755); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(marker)
			if n := bytes.Count(b, []byte("\n")); n > 0 {
				t.Errorf("the swapped code ran %d times in %d launches", n, raceCalls)
			}
			t.Logf("%d launches during %d swaps: %d ran the recorded plugin, %d refused as tampered", raceCalls, swaps.Load(), ran, refused)
		})
	}
}

// TestLaunchPaths: the first start runs the installed file (stopped at
// exec and checked), restarts run the version's sealed copy, and a file
// someone holds open for writing (which cannot be executed) is started
// from the sealed copy too.
func TestLaunchPaths(t *testing.T) {
	t.Parallel()
	exe := func(t *testing.T, h *Host) string {
		t.Helper()
		l, _ := os.Readlink("/proc/" + strconv.Itoa(pidOf(t, h, "tp")) + "/exe")
		return l
	}
	if !canTrace {
		// The fallback (portable tag): every start runs the private copy.
		h := newHost(t)
		h.Register(tp())
		if got := exe(t, h); !strings.Contains(got, "agent-plugin-") {
			t.Errorf("runs %q, want the private copy", got)
		}
		return
	}
	t.Run("first start in place, restart from the copy", func(t *testing.T) {
		t.Parallel()
		h := newHost(t)
		h.Register(tp())
		if got := exe(t, h); got != testPlugin {
			t.Errorf("first start runs %q, want the installed %q", got, testPlugin)
		}
		_, err := h.Invoke(context.Background(), "tp", "exit", json.RawMessage(`{"code":1}`))
		sdkErr(t, err, sdk.CodePluginCrashed)
		if got := exe(t, h); !strings.Contains(got, "memfd:") {
			t.Errorf("restart runs %q, want the sealed memfd copy", got)
		}
	})
	t.Run("open for writing: sealed copy", func(t *testing.T) {
		t.Parallel()
		path := copyPlugin(t)
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		h := newHost(t)
		h.Register(Plugin{Name: "tp", Path: path, SHA256: fileSHA(t, path)})
		if got := exe(t, h); !strings.Contains(got, "memfd:") {
			t.Errorf("runs %q, want the sealed memfd copy", got)
		}
	})
}
