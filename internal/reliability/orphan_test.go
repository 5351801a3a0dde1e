//go:build reliability

package reliability

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// installed is an AGENT_HOME with crashy (a Go plugin) and scripty (python
// scripts) installed and trusted from repo.
func installed(t *testing.T, repo *skillRepo, extra ...string) (string, []string) {
	t.Helper()
	home := filepath.Join(t.TempDir(), "home")
	environ := env(home, extra...)
	must(t, environ, "skill", "add", repo.FileURL(), "crashy", "--trust")
	must(t, environ, "skill", "add", repo.FileURL(), "scripty", "--trust")
	return home, environ
}

// TestReliabilityOrphans checks /proc after the host exits normally, after
// it is SIGKILLed in the middle of a plugin call and of a script run, and
// after a script with grandchildren times out: no process of the plugin
// binary or the script may remain, and no zombie.
func TestReliabilityOrphans(t *testing.T) {
	repo := newSkillRepo(t, nil)
	home, environ := installed(t, repo, "AGENT_SCRIPT_TIMEOUT=2")
	pluginsDir := filepath.Join(home, "plugins")
	skillsDir := filepath.Join(home, "skills")
	zBefore := zombieSet()
	comms := []string{"crashy", "python3", "agent"}
	var cases, leftovers, failed int

	check := func(name string, marks []string) {
		t.Helper()
		cases++
		// The bound only turns a leak into a failure instead of a hang.
		if left := waitGone(5*time.Second, marks, comms...); len(left) > 0 {
			leftovers += len(left)
			failed++
			t.Errorf("%s: %d processes remain: %v", name, len(left), left)
			for _, p := range left {
				_ = syscall.Kill(p.PID, syscall.SIGKILL) // ours: do not leak them past the test
			}
		}
	}

	// 1. Normal exit after a plugin call and after a script that leaves
	// tagged grandchildren behind when it exits.
	r := must(t, environ, "call", "crashy.work", `{"i":1}`)
	if c := parseCall(t, r); !c.Success {
		t.Fatalf("call failed: %v", r)
	}
	check("host exits normally after a plugin call", []string{pluginsDir})
	token := "orphan-normal-" + fmt.Sprint(time.Now().UnixNano())
	r = must(t, environ, "call", "script_run", `{"skill_name":"scripty","script_name":"spawn","args":["`+token+`","0"]}`)
	if c := parseCall(t, r); !c.Success {
		t.Fatalf("spawn failed: %v", r)
	}
	check("script exits leaving grandchildren, host exits normally", []string{token, skillsDir})

	// 2. Host SIGKILLed mid-call: a plugin tool that blocks, then a script
	// whose descendants are running.
	killMidCall := func(name string, args []string, marks []string, want int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd, _, _ := agentCmd(ctx, environ, "", args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 20*time.Second, want, marks...)
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		check(name, marks)
	}
	// The kill is repeated: whether cleanup happens can depend on which
	// thread of a plugin got which death signal.
	const kills = 5
	for k := 0; k < kills; k++ {
		killMidCall(fmt.Sprintf("host SIGKILLed during a plugin call (trial %d)", k), []string{"call", "crashy.hang", `{}`}, []string{pluginsDir}, 1)
		token = fmt.Sprintf("orphan-kill-%d-%d", k, time.Now().UnixNano())
		// spawn.py + 2 children + 2 grandchildren carry the token.
		killMidCall(fmt.Sprintf("host SIGKILLed during a script with grandchildren (trial %d)", k),
			[]string{"call", "script_run", `{"skill_name":"scripty","script_name":"spawn","args":["` + token + `","600"]}`},
			[]string{token}, 5)
	}

	// 3. A script with grandchildren that times out (AGENT_SCRIPT_TIMEOUT=2).
	token = "orphan-timeout-" + fmt.Sprint(time.Now().UnixNano())
	r = agent(t, environ, "call", "script_run", `{"skill_name":"scripty","script_name":"spawn","args":["`+token+`","600"]}`)
	if c := parseCall(t, r); c.Success || c.Error != "timeout" {
		t.Errorf("want a timeout error, got %v", r)
	}
	check("script with grandchildren timed out", []string{token})

	// Only zombies of what this test started count; the machine may have
	// others (this sandbox's pid 1 reaps lazily).
	var zombies []proc
	for _, z := range newZombies(zBefore) {
		if slices.Contains(comms, z.Comm) || strings.HasPrefix(z.Comm, "orphan") {
			zombies = append(zombies, z)
			t.Errorf("zombie left: %v", z)
		} else {
			t.Logf("unrelated new zombie: %v", z)
		}
	}
	result("orphans", "%d scenarios (normal exit after a plugin call; normal exit after a script left 4 descendants; %d x SIGKILL of the host mid plugin call; %d x SIGKILL of the host mid script with 4 descendants; script timeout with 4 descendants): %d scenarios left processes behind, %d processes left in total, %d new zombies",
		cases, kills, kills, failed, leftovers, len(zombies))
}
