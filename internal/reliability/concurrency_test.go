//go:build reliability

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// TestReliabilityRegistryConcurrency runs 20 agent processes at once, each
// adding, updating or removing its own skill, and repeats that 10 times.
// Six readers (skill list, tools) run alongside each round. After every
// round registry.json must be valid JSON and match the skill folders on
// disk exactly.
func TestReliabilityRegistryConcurrency(t *testing.T) {
	const procs, rounds, readers = 20, 10, 6
	files := map[string]string{}
	for i := 0; i < procs; i++ {
		files[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = concManifest(i, 0)
		files[fmt.Sprintf("skills/s%02d/scripts/hello.py", i)] = scriptySkill["skills/scripty/scripts/hello.py"]
	}
	repo := gittest.NewRepo(t, files)
	home := filepath.Join(t.TempDir(), "home")
	environ := env(home)

	installed := make([]bool, procs)
	version := make([]int, procs) // round whose commit each installed skill is at
	ops := map[string]int{}
	var failures int
	for r := 1; r <= rounds; r++ {
		next := map[string]string{}
		for i := 0; i < procs; i++ {
			next[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = concManifest(i, r)
		}
		head := repo.Commit(t, next, fmt.Sprintf("round %d", r))

		type job struct {
			op   string
			args []string
		}
		jobs := make([]job, procs)
		for i := 0; i < procs; i++ {
			name := fmt.Sprintf("s%02d", i)
			// Each skill cycles add, update, remove from its own offset, so
			// every round mixes all three operations.
			switch op := (i + r) % 3; {
			case !installed[i]:
				jobs[i] = job{"add", []string{"skill", "add", repo.FileURL(), name, "--trust"}}
			case op == 2:
				jobs[i] = job{"remove", []string{"skill", "remove", name, "--yes"}}
			default:
				jobs[i] = job{"update", []string{"skill", "update", name, "--yes"}}
			}
		}
		// Readers run alongside: they must never fail, print broken JSON
		// or take an update in flight for tampering.
		for k := 0; k < readers; k++ {
			args := []string{"skill", "list", "--json"}
			if k%2 == 1 {
				args = []string{"tools", "--json"}
			}
			jobs = append(jobs, job{"read", args})
		}
		// Start all processes, then wait for all: they overlap for real.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		runs := make([]run, len(jobs))
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd, stdout, stderr := agentCmd(ctx, environ, "", jobs[i].args...)
				<-start
				_ = cmd.Run()
				runs[i] = finished(cmd, jobs[i].args, stdout, stderr)
			}()
		}
		close(start)
		wg.Wait()
		cancel()
		for i, rr := range runs {
			ops[jobs[i].op]++
			if rr.Code != 0 {
				failures++
				t.Errorf("round %d: %v", r, rr)
				continue
			}
			if jobs[i].op == "read" {
				if !json.Valid([]byte(rr.Stdout)) || strings.Contains(rr.Stderr, "changed after install") {
					failures++
					t.Errorf("round %d: reader: %v", r, rr)
				}
				continue
			}
			switch jobs[i].op {
			case "add", "update":
				installed[i], version[i] = true, r
			case "remove":
				installed[i] = false
			}
		}

		es := checkHome(t, home)
		got := map[string]entry{}
		for _, e := range es {
			got[e.Canonical] = e
		}
		for i := 0; i < procs; i++ {
			name := fmt.Sprintf("s%02d", i)
			e, ok := got[name]
			switch {
			case ok != installed[i]:
				t.Errorf("round %d: %s in registry = %v, want %v", r, name, ok, installed[i])
			case ok && version[i] == r && e.CommitSHA != head:
				t.Errorf("round %d: %s at %s, want %s", r, name, e.CommitSHA, head)
			case ok && e.Version != fmt.Sprintf("1.%d.0", version[i]):
				t.Errorf("round %d: %s at version %s, want 1.%d.0", r, name, e.Version, version[i])
			}
		}
		list := must(t, environ, "skill", "list", "--json")
		if n := countJSONList(t, list.Stdout); n != len(es) {
			t.Errorf("round %d: skill list shows %d skills, registry has %d", r, n, len(es))
		}
		if t.Failed() {
			break
		}
	}
	var opNames []string
	for op, n := range ops {
		if op == "read" {
			continue
		}
		opNames = append(opNames, fmt.Sprintf("%d %s", n, op))
	}
	sort.Strings(opNames)
	result("registry-concurrency", "%d rounds x %d concurrent writers = %d commands (%s), plus %d readers (skill list, tools) alongside: %d failed; registry valid JSON and equal to the folders on disk after %d of %d rounds",
		rounds, procs, rounds*procs, strings.Join(opNames, ", "), ops["read"], failures, map[bool]int{true: 0, false: rounds}[t.Failed()], rounds)
}

func concManifest(i, round int) string {
	return fmt.Sprintf("---\nname: s%02d\ndescription: Concurrency test skill %d.\nversion: 1.%d.0\n---\nBody of round %d.\n", i, i, round, round)
}

// countJSONList counts the installed (not bundled) skills that
// `agent skill list --json` printed.
func countJSONList(t testing.TB, out string) int {
	t.Helper()
	var arr []struct {
		Source string `json:"source"`
	}
	if err := json.Unmarshal([]byte(out), &arr); err != nil {
		t.Fatalf("skill list --json printed %q: %v", clip(out), err)
	}
	n := 0
	for _, e := range arr {
		if e.Source != "bundled" {
			n++
		}
	}
	return n
}
