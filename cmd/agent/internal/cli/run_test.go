package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/fakemodel"
	"github.com/agentskills/agent/internal/gittest"
)

// waitScript sleeps for a minute the first time, so that a run can be
// killed in the middle of a step; once its marker exists it returns at
// once, as the replayed step needs.
const waitScript = `#!/usr/bin/env python3
# /// script
# requires-python = ">=3.9"
# dependencies = []
# ///
"""Wait once."""
import os, sys, time
marker = sys.argv[1]
if os.path.exists(marker):
    print("went through")
    sys.exit(0)
open(marker, "w").close()
time.sleep(60)
`

// TestRunSignalThenContinue runs the real agent binary against a scripted
// model on loopback, stops it in the middle of a script_run step with
// SIGINT or SIGKILL, checks that no plugin or script process is left, and
// resumes the job with --continue from its last checkpoint.
func TestRunSignalThenContinue(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent")
	build := exec.Command("go", "build", "-o", agent, "./cmd/agent")
	build.Dir = moduleRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	repo := gittest.NewRepo(t, map[string]string{
		"skills/slow/SKILL.md":        "---\nname: slow\ndescription: Waits.\n---\nRun the wait script.\n",
		"skills/slow/scripts/wait.py": waitScript,
	})
	for _, tc := range []struct {
		name     string
		sig      syscall.Signal
		wantExit int
	}{
		{"SIGINT", syscall.SIGINT, 130},
		{"SIGKILL", syscall.SIGKILL, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			home := filepath.Join(filepath.Dir(work), "home")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(work, "waited")
			args, _ := json.Marshal(map[string]any{"skill_name": "slow", "script_name": "wait", "args": []string{marker}})
			srv, err := fakemodel.Start(
				fakemodel.Reply{Text: "waiting", ToolCalls: []fakemodel.Call{{Name: "script_run", Args: string(args)}}},
				fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "attempt_completion", Args: "{}"}}},
				fakemodel.Reply{Text: "finished"},
			)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			env := append(os.Environ(), "AGENT_HOME="+home, "AGENT_SKILLS=slow", "AGENT_WORKSPACE="+work,
				"OPENAI_API_KEY=test", "OPENAI_BASE_URL="+srv.OpenAIURL(), "AGENT_UV=/nonexistent/uv")
			add := exec.Command(agent, "skill", "add", repo.Dir(), "skills/slow", "--trust")
			add.Env = env
			if out, err := add.CombinedOutput(); err != nil {
				t.Fatalf("skill add: %v\n%s", err, out)
			}

			cmd := exec.Command(agent, "run", "--model", "openai/fake", "--events=stdout", "wait")
			cmd.Env, cmd.Dir = env, work
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			for lines.Scan() {
				if strings.Contains(lines.Text(), `"type":"call_tool"`) {
					break
				}
			}
			// The script is running once its marker exists.
			waitFor(t, func() bool { _, err := os.Stat(marker); return err == nil })
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != tc.wantExit {
				t.Fatalf("exit code %d (%v), want %d\n%s", code, err, tc.wantExit, stderr.String())
			}
			// No plugin or script process outlives the agent.
			waitFor(t, func() bool { return len(processesUnder(dir, filepath.Dir(work))) == 0 })

			cont := exec.Command(agent, "run", "--continue", "--events=stdout")
			cont.Env, cont.Dir = env, work
			out, err := cont.Output()
			if err != nil {
				t.Fatalf("--continue: %v\n%s", err, out)
			}
			var replayed, completed bool
			for _, line := range strings.Split(string(out), "\n") {
				var ev struct {
					Type, Tool, Result string
					Replayed           bool
					Step               int
				}
				if json.Unmarshal([]byte(line), &ev) != nil {
					continue
				}
				if ev.Type == "tool_result" && ev.Tool == "script_run" && ev.Replayed && ev.Step == 1 && strings.Contains(ev.Result, "went through") {
					replayed = true
				}
				if ev.Type == "complete_run" && ev.Result == "finished" {
					completed = true
				}
			}
			if !replayed || !completed {
				t.Fatalf("--continue did not replay step 1 and complete:\n%s", out)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 300 {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("timed out waiting")
}

// processesUnder lists live processes whose command line names a path
// under one of dirs (the agent binary, the skill's scripts).
func processesUnder(dirs ...string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(st), ") Z ") {
			continue // a zombie holds nothing
		}
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		for _, d := range dirs {
			if strings.Contains(cmdline, d) {
				out = append(out, e.Name()+": "+cmdline)
				break
			}
		}
	}
	return out
}
