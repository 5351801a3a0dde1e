//go:build reliability

package reliability

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// raceCalls is how many `agent call`s each launch race runs (SPEC §12:
// 2,000); RELIABILITY_RACE_CALLS lowers it for a quick local run.
func raceCalls() int {
	if n, err := strconv.Atoi(os.Getenv("RELIABILITY_RACE_CALLS")); err == nil && n > 0 {
		return n
	}
	return 2000
}

// wrapperSkills are `#!` plugins (plugin.command) around the crashy binary
// named by RELIABILITY_CRASHY: wrapped only execs it; holder first starts
// a tagged child that inherits (and so holds) the plugin's stdout.
const holderMark = "holder-sleeper-mark"

func wrapperSkills() map[string]string {
	// The wrappers exec crashy, outside their folders: they declare its
	// folder readable (the sandbox grants executing what it may read).
	perms := "permissions:\n  env: [RELIABILITY_*]\n  fs:\n    read: [" + filepath.Dir(crashyBin) + "]\n"
	return map[string]string{
		"skills/wrapped/SKILL.md": "---\nname: wrapped\ndescription: A #! plugin around crashy.\nplugin:\n  command: run.sh\n" + perms + "---\nCall work.\n",
		"skills/wrapped/run.sh":   "#!/bin/sh\nexec \"$RELIABILITY_CRASHY\" \"$@\"\n",
		"skills/holder/SKILL.md":  "---\nname: holder\ndescription: A #! plugin whose child holds its stdout.\nplugin:\n  command: run.sh\n" + perms + "---\nCall hang.\n",
		"skills/holder/run.sh":    "#!/bin/sh\npython3 -c 'import time; time.sleep(600)' " + holderMark + " &\nexec \"$RELIABILITY_CRASHY\" \"$@\"\n",
	}
}

// TestReliabilityLaunchRace: a writer swaps an installed plugin for code
// that appends to a marker file, over and over, while `agent call` runs
// again and again: in place (same inode) for the Go binary, by rename for
// a `#!` plugin. Every call must run the recorded plugin or refuse it as
// tampered; the swapped code must never run.
func TestReliabilityLaunchRace(t *testing.T) {
	repo := newSkillRepo(t, wrapperSkills())
	home, environ := installed(t, repo, "RELIABILITY_CRASHY="+crashyBin)
	must(t, environ, "skill", "add", repo.FileURL(), "wrapped", "--trust")
	es, err := readRegistry(home)
	if err != nil {
		t.Fatal(err)
	}
	crashy, _ := find(es, "crashy")
	wrapped, _ := find(es, "wrapped")
	n := raceCalls()
	marker := filepath.Join(t.TempDir(), "swapped-code-ran")
	evil := []byte("#!/bin/sh\necho >>" + marker + "\nexit 0\n")

	tests := []struct {
		name, tool, path string
		swap             func(path string, good []byte)
	}{
		{"plugin binary rewritten in place", "crashy.work", crashy.Plugin.Path, func(path string, good []byte) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			_, _ = f.WriteAt(evil, 0)
			_, _ = f.WriteAt(good[:len(evil)], 0)
			_ = f.Close()
		}},
		{"#! plugin swapped by rename", "wrapped.work", wrapped.Plugin.Path, func(path string, good []byte) {
			for _, b := range [][]byte{evil, good} {
				tmp := path + ".swap"
				if os.WriteFile(tmp, b, 0o755) == nil {
					_ = os.Rename(tmp, path)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(marker)
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
					tc.swap(tc.path, good)
					swaps.Add(1)
				}
			}()
			var ok, refused, other int
			for range n {
				r := agent(t, environ, "call", tc.tool, `{"i":1}`)
				var c callResult
				_ = jsonUnmarshal(r.Stdout, &c)
				switch {
				case c.Success:
					ok++
				case c.Error == "plugin_tampered" || c.Error == "skill_tampered":
					// skill_tampered: the whole-skill hash caught the
					// swapped run.sh before the launch check did.
					refused++
				default:
					other++
					if other <= 3 {
						t.Logf("neither ran nor refused as tampered: %v", r)
					}
				}
			}
			close(stop)
			wg.Wait()
			if err := os.WriteFile(tc.path, good, 0o755); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(marker)
			ran := bytes.Count(b, []byte("\n"))
			if ran > 0 {
				t.Errorf("the swapped code ran %d times", ran)
			}
			if other > 0 {
				t.Errorf("%d calls failed otherwise", other)
			}
			result("launch race: "+tc.name, "%d calls during %d swaps: %d ran the recorded plugin, %d refused as tampered, %d other errors, %d runs of the swapped code",
				n, swaps.Load(), ok, refused, other, ran)
		})
	}
}

// TestReliabilityContainment: descendants that leave the process group
// (setsid) or hold the plugin's stdout end with the script or plugin that
// started them, and a call's deadline holds.
func TestReliabilityContainment(t *testing.T) {
	repo := newSkillRepo(t, wrapperSkills())
	_, environ := installed(t, repo, "RELIABILITY_CRASHY="+crashyBin, "AGENT_SCRIPT_TIMEOUT=2")
	must(t, environ, "skill", "add", repo.FileURL(), "holder", "--trust")
	var cases, failed int
	check := func(name string, marks ...string) {
		t.Helper()
		cases++
		// The bound only turns a leak into a failure instead of a hang.
		if left := waitGone(5*time.Second, marks); len(left) > 0 {
			failed++
			t.Errorf("%s: %d processes remain: %v", name, len(left), left)
			for _, p := range left {
				_ = syscall.Kill(p.PID, syscall.SIGKILL)
			}
		}
	}
	token := func(what string) string { return fmt.Sprintf("contain-%s-%d", what, time.Now().UnixNano()) }

	// 1. A child holding stdout must not hold `agent call --timeout 5s`:
	// the sleeper lives 600 s; the call ends at its deadline and the
	// plugin is stopped within the grace periods.
	t0 := time.Now()
	r := agent(t, environ, "call", "--timeout", "5s", "holder.hang", `{}`)
	took := time.Since(t0)
	if c := parseCall(t, r); c.Success || c.Error != "timeout" {
		t.Errorf("want a timeout, got %v", r)
	}
	if took > 30*time.Second {
		t.Errorf("agent call --timeout 5s took %s: the child holding stdout held it", took)
	}
	check("plugin child holding stdout, call timed out", holderMark)
	result("deadline with a child holding stdout", "agent call --timeout 5s returned in %.1fs", took.Seconds())

	// 2. A script's setsid daemon, when the script exits and when it
	// times out (AGENT_SCRIPT_TIMEOUT=2).
	tok := token("script-exit")
	r = agent(t, environ, "call", "script_run", `{"skill_name":"scripty","script_name":"daemon","args":["`+tok+`","0"]}`)
	if c := parseCall(t, r); !c.Success {
		t.Errorf("daemon.py failed: %v", r)
	}
	check("setsid daemon of a script that exited", tok)
	tok = token("script-timeout")
	r = agent(t, environ, "call", "script_run", `{"skill_name":"scripty","script_name":"daemon","args":["`+tok+`","600"]}`)
	if c := parseCall(t, r); c.Success || c.Error != "timeout" {
		t.Errorf("want a timeout, got %v", r)
	}
	check("setsid daemon of a script that timed out", tok)

	// 3. A plugin's setsid daemon, when the plugin stops and when the
	// host is SIGKILLed mid-call.
	tok = token("plugin-stop")
	r = agent(t, environ, "call", "crashy.daemon", `{"token":"`+tok+`"}`)
	if c := parseCall(t, r); !c.Success {
		t.Errorf("crashy.daemon failed: %v", r)
	}
	check("setsid daemon of a plugin that stopped", tok)
	const kills = 5
	for k := range kills {
		tok = token(fmt.Sprintf("plugin-kill-%d", k))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd, _, _ := agentCmd(ctx, environ, "", "call", "crashy.daemon", `{"token":"`+tok+`","hang":true}`)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, 1, tok)
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		cancel()
		check(fmt.Sprintf("setsid daemon of a plugin whose host was SIGKILLed (trial %d)", k), tok)
	}
	result("containment", "%d scenarios (child holding stdout past a 5s deadline; setsid daemon of a script that exited; of a script that timed out; of a plugin that stopped; %d x of a plugin whose host was SIGKILLed): %d left processes behind",
		cases, kills, failed)
}
