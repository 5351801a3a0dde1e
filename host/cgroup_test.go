//go:build linux && !portable

package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/isolation/cgroup"
	"github.com/agentskills/agent/sdk"
)

// escapees lists the live processes whose argv[0] is mark, and the
// zombies among this process's children that were named so.
func escapees(mark string) (live, zombies []int) {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		stat, _ := os.ReadFile(filepath.Join(dir, "stat"))
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || i+2 >= len(s) {
			continue
		}
		f := strings.Fields(s[i+2:])
		if len(f) < 2 {
			continue
		}
		if f[0] == "Z" {
			// A zombie has no cmdline; the comm of `exec -a X sleep` is sleep.
			if f[1] == self && strings.HasPrefix(s, e.Name()+" (sleep)") {
				zombies = append(zombies, pid)
			}
			continue
		}
		if arg0, _, _ := bytes.Cut(cmdline, []byte{0}); string(arg0) == mark {
			live = append(live, pid)
		}
	}
	return live, zombies
}

// TestWrapperEscapeeEndsWithPlugin is issue 22's hostile `#!` plugin: its
// script starts a grandchild that leaves the process group (setsid),
// drops the environment and with it the plugin cookie (env -i), and
// renames itself (exec -a), then execs a real SDK plugin. The plugin then
// crashes, 200 times, each crash followed by a restart. With cgroup v2,
// nothing of it may be left, live or zombie, in a host that keeps running.
func TestWrapperEscapeeEndsWithPlugin(t *testing.T) {
	if _, err := cgroup.Shared(); err != nil {
		t.Skipf("no cgroup v2 containment here (%v): process groups cannot catch a setsid grandchild without the cookie", err)
	}
	starts := 200
	if testing.Short() {
		starts = 20
	}
	mark := fmt.Sprintf("escapee-%d-%d", os.Getpid(), time.Now().UnixNano())
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "run.sh")
	script := "#!/bin/bash\n( setsid env -i bash -c 'exec -a " + mark + " sleep 300' & )\nexec " + testPlugin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHost(t)
	h.Register(Plugin{Name: "escaper", Path: wrapper, SHA256: fileSHA(t, wrapper)})
	for i := range starts {
		_, err := h.Invoke(context.Background(), "escaper", "exit", json.RawMessage(`{"code":3}`))
		if se := (*sdk.Error)(nil); !errors.As(err, &se) || se.Code != sdk.CodePluginCrashed {
			t.Fatalf("start %d: want plugin_crashed, got %v", i, err)
		}
	}
	check := func(when string) {
		t.Helper()
		var live, zombies []int
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			live, zombies = escapees(mark)
			if len(live)+len(zombies) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(live)+len(zombies) > 0 {
			t.Errorf("%s: %d escapees alive %v, %d zombies %v", when, len(live), live, len(zombies), zombies)
		}
	}
	check(fmt.Sprintf("after %d crashes and restarts", starts))
	if _, err := h.Invoke(context.Background(), "escaper", "pid", nil); err != nil {
		t.Fatal(err)
	}
	// The wrapper's subshell runs alongside the plugin: wait for it.
	live, _ := escapees(mark)
	for deadline := time.Now().Add(5 * time.Second); len(live) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		live, _ = escapees(mark)
	}
	if len(live) != 1 {
		t.Errorf("a running wrapper should have one escapee, found %v", live)
	}
	_ = h.Close()
	check("after Close")
}
