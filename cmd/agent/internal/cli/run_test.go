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

	"github.com/agentskills/agent/internal/testutil/fakemodel"
	"github.com/agentskills/agent/internal/testutil/gittest"
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
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	// Its own link of the binary: the processes left behind are found by
	// their command line, and other tests run the shared one meanwhile.
	agent := privateAgent(t)
	dir := filepath.Dir(agent)
	repo := gittest.NewRepo(t, map[string]string{
		"skills/slow/SKILL.md":        "---\nname: slow\ndescription: Waits.\npermissions:\n  fs:\n    write: [$WORKSPACE]\n---\nRun the wait script.\n",
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

// buildAgent builds the real agent binary for a test that runs it.
func buildAgent(t *testing.T) string {
	t.Helper()
	// testscript.Main (TestMain) put a copy of this test binary named
	// "agent" first on PATH, which runs cli.Main: the CLI as it ships, with
	// no `go build` of its own (a link of the whole binary per test).
	agent, err := exec.LookPath("agent")
	if err != nil {
		t.Fatalf("the agent copy of this test binary: %v", err)
	}
	return agent
}

// privateAgent is buildAgent's binary, linked (or copied) into a folder
// of t's own.
func privateAgent(t *testing.T) string {
	t.Helper()
	shared := buildAgent(t)
	agent := filepath.Join(t.TempDir(), "agent")
	if os.Link(shared, agent) == nil {
		return agent
	}
	if out, err := exec.Command("cp", shared, agent).CombinedOutput(); err != nil {
		t.Fatalf("copy the agent binary: %v\n%s", err, out)
	}
	return agent
}

// runAgent runs the agent binary in a fresh workspace against srv.
func runAgent(t *testing.T, agent string, srv *fakemodel.Server, work string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(agent, args...)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "AGENT_HOME="+filepath.Join(filepath.Dir(work), "home"), "AGENT_WORKSPACE="+work,
		"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL="+srv.AnthropicURL())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// TestRunBinary runs `agent run` end to end with the bundled base skill:
// todos that keep attempt_completion from ending the run, a file written
// with --yes, and a provider failing with 429s, reported with the job left
// for --continue.
func TestRunBinary(t *testing.T) {
	agent := buildAgent(t)
	t.Run("base todos", func(t *testing.T) {
		work := filepath.Join(t.TempDir(), "work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		srv, err := fakemodel.Start(
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "todo", Args: `{"new_todos":["write hello.txt"]}`}}},
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "attempt_completion", Args: `{}`}}},
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "write_file", Args: `{"path":"hello.txt","content":"hi"}`}, {Name: "todo", Args: `{"completed_todos":[1]}`}}},
			fakemodel.Reply{ToolCalls: []fakemodel.Call{{Name: "attempt_completion", Args: `{}`}}},
			fakemodel.Reply{Text: "Wrote hello.txt."},
		)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		out, errOut, code := runAgent(t, agent, srv, work, "run", "--yes", "--events=none", "--model", "anthropic/fake", "write hello.txt")
		if code != 0 || strings.TrimSpace(out) != "Wrote hello.txt." {
			t.Fatalf("exit %d, stdout %q\n%s", code, out, errOut)
		}
		if b, err := os.ReadFile(filepath.Join(work, "hello.txt")); err != nil || string(b) != "hi" {
			t.Fatalf("hello.txt: %q, %v", b, err)
		}
		reqs := srv.Requests()
		if got := reqs[2].LastResults()[0].Content; !strings.Contains(got, "remaining_todos") {
			t.Fatalf("attempt_completion with an open todo answered %s", got)
		}
		if len(reqs) != 5 {
			t.Fatalf("%d model calls, want 5", len(reqs))
		}
	})
	t.Run("429 then continue", func(t *testing.T) {
		work := filepath.Join(t.TempDir(), "work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		srv, err := fakemodel.Start(fakemodel.Reply{Error: "rate_limit", Times: 5}, fakemodel.Reply{Text: "first"}, fakemodel.Reply{Text: "second"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		_, errOut, code := runAgent(t, agent, srv, work, "run", "--events=none", "--model", "anthropic/fake", "hi")
		if code != 1 || !strings.Contains(errOut, "rate limited") || !strings.Contains(errOut, "agent run --continue") {
			t.Fatalf("exit %d, stderr:\n%s", code, errOut)
		}
		out, errOut, code := runAgent(t, agent, srv, work, "run", "--continue", "--events=none")
		if code != 0 || strings.TrimSpace(out) != "second" {
			t.Fatalf("--continue: exit %d, stdout %q\n%s", code, out, errOut)
		}
	})
	t.Run("missing key", func(t *testing.T) {
		work := filepath.Join(t.TempDir(), "work")
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(agent, "run", "--model", "anthropic/x", "hi")
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "AGENT_HOME="+filepath.Join(filepath.Dir(work), "home"), "AGENT_WORKSPACE="+work, "ANTHROPIC_API_KEY=")
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "ANTHROPIC_API_KEY") || !strings.Contains(string(out), "no job was started") || strings.Contains(string(out), "--continue") {
			t.Fatalf("exit %d:\n%s", cmd.ProcessState.ExitCode(), out)
		}
		// It could not start: no job folder for --continue to find.
		if _, err := os.Stat(filepath.Join(work, ".agent", "jobs")); err == nil {
			t.Fatal("a run that could not start created a job folder")
		}
	})
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
