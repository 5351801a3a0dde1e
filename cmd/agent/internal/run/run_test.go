package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/testutil/fakemodel"
	"github.com/agentskills/agent/sdk"
)

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w.provider, w.stream,
				tools(call("use_skill", `{"skill":"greeter","args":["Ada"]}`)),
				tools(call("todo", `{"add":["greet Ada"]}`)),
				tools(call("attempt_completion", `{}`)), // a todo is open: go on
				tools(call("todo", `{"done":["greet Ada"]}`)),
				tools(call("attempt_completion", `{}`)), // none open: write the result
				text("Said hello to Ada."),
			)
			out, err := run.Start(context.Background(), h.opts, "greet Ada")
			out = mustOutcome(t, out, err, run.StatusCompleted)
			if out.Result != "Said hello to Ada." || out.Steps != 5 {
				t.Fatalf("outcome = %+v", out)
			}
			reqs := h.srv.Requests()
			if len(reqs) != 6 {
				t.Fatalf("%d model calls, want 6", len(reqs))
			}
			if len(reqs[1].LastResults()) == 0 || !strings.Contains(reqs[1].LastResults()[0].Content, "Say hello to Ada.") {
				t.Fatalf("use_skill result = %+v", reqs[1])
			}
			if got := reqs[3].LastResults()[0].Content; !strings.Contains(got, "greet Ada") {
				t.Fatalf("attempt_completion with an open todo answered %s", got)
			}
			// OpenAI sends the tool results and the request for the
			// result as two messages, Anthropic as one.
			msgs := reqs[5].Messages
			last := msgs[len(msgs)-1]
			results := last.ToolResults
			if len(results) == 0 {
				results = msgs[len(msgs)-2].ToolResults
			}
			if !strings.Contains(last.Text, "final result") || len(results) != 1 || results[0].Content != "{}" {
				t.Fatalf("last request = %+v", msgs)
			}
			if !strings.Contains(reqs[0].System, "greeter") || !strings.Contains(reqs[0].System, "use_skill") {
				t.Fatalf("system prompt lacks Layer 1: %q", reqs[0].System)
			}
			if n := len(h.events(run.TypeCompleteRun)); n != 1 {
				t.Fatalf("%d complete_run events", n)
			}
			if w.stream && len(h.events(run.TypeText)) < 2 {
				t.Fatalf("text did not stream: %+v", h.events(run.TypeText))
			}
			// The state is on disk.
			job, err := h.opts.Store.LastJob()
			if err != nil || job.Status != run.StatusCompleted || job.Result != out.Result {
				t.Fatalf("job.json = %+v, %v", job, err)
			}
			files, _ := filepath.Glob(filepath.Join(h.root, ".agent", "jobs", job.ID, "runs", job.Coordinator, "*"))
			var cps, evs int
			for _, f := range files {
				switch {
				case strings.HasPrefix(filepath.Base(f), "checkpoint-"):
					cps++
				case strings.HasPrefix(filepath.Base(f), "event-"):
					evs++
				}
			}
			if cps < 5 || evs < 10 {
				t.Fatalf("%d checkpoints and %d events on disk", cps, evs)
			}
		})
	}
}

func TestNoToolCallTwiceEnds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "anthropic", true, text("thinking"), text("Here is the answer."))
	out, err := run.Start(context.Background(), h.opts, "question")
	out = mustOutcome(t, out, err, run.StatusCompleted)
	if out.Result != "Here is the answer." || out.Steps != 2 {
		t.Fatalf("outcome = %+v", out)
	}
	if msgs := h.srv.Requests()[1].Messages; !strings.Contains(msgs[len(msgs)-1].Text, "attempt_completion") {
		t.Fatalf("no nudge after a turn without a tool call: %+v", msgs)
	}
}

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "openai", false)
	h.srv.Func = func(fakemodel.Request) fakemodel.Reply {
		return tools(call("use_skill", `{"skill":"greeter"}`))
	}
	h.opts.MaxSteps = 3
	out, err := run.Start(context.Background(), h.opts, "loop forever")
	out = mustOutcome(t, out, err, run.StatusMaxSteps)
	if !errors.Is(err, run.ErrMaxSteps) || out.Steps != 3 || len(h.srv.Requests()) != 3 {
		t.Fatalf("err %v, outcome %+v, %d model calls", err, out, len(h.srv.Requests()))
	}
	// --continue with a higher bound goes on counting the same job.
	h.opts.MaxSteps = 5
	out, err = run.Continue(context.Background(), h.opts, "")
	out = mustOutcome(t, out, err, run.StatusMaxSteps)
	if out.Steps != 5 || len(h.srv.Requests()) != 5 {
		t.Fatalf("after --continue: outcome %+v, %d model calls", out, len(h.srv.Requests()))
	}
}

func TestToolErrorFedBack(t *testing.T) {
	t.Parallel()
	for _, w := range wires[:3:3] {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w.provider, w.stream,
				tools(call("fail", `{}`), call("use_skill", `{"skill":"nope"}`), call("use_skill", `{"skill":"manual"}`)),
				tools(call("attempt_completion", `{}`)),
				text("gave up nicely"),
			)
			out, err := run.Start(context.Background(), h.opts, "try")
			mustOutcome(t, out, err, run.StatusCompleted)
			res := h.srv.Requests()[1].LastResults()
			for i, want := range []string{`"boom"`, `"not_found"`, `"model_invocation_disabled"`} {
				if !strings.Contains(res[i].Content, want) {
					t.Fatalf("result %d = %+v, want %s", i, res[i], want)
				}
				if w.provider == "anthropic" && !res[i].IsError {
					t.Fatalf("result %d not marked is_error", i)
				}
			}
		})
	}
}

func TestMalformedToolCall(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			first := tools(call("no_such_tool", `{}`), call("todo", `{"add": 5}`))
			if w.provider == "openai" {
				// Only OpenAI carries arguments as text that can be broken.
				first.ToolCalls = append(first.ToolCalls, call("todo", `{"add": [`))
			}
			h := newHarness(t, w.provider, w.stream, first, tools(call("attempt_completion", `{}`)), text("ok"))
			out, err := run.Start(context.Background(), h.opts, "try")
			mustOutcome(t, out, err, run.StatusCompleted)
			res := h.srv.Requests()[1].LastResults()
			if len(res) != len(first.ToolCalls) {
				t.Fatalf("%d results for %d calls", len(res), len(first.ToolCalls))
			}
			if !strings.Contains(res[0].Content, "unknown_tool") || !strings.Contains(res[1].Content, "invalid_args") {
				t.Fatalf("results = %+v", res)
			}
			if w.provider == "openai" && !strings.Contains(res[2].Content, sdk.CodeInvalidArgs) {
				t.Fatalf("malformed JSON result = %+v", res[2])
			}
		})
	}
}

func TestConcurrentToolCalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "anthropic", true,
		tools(call("meet", `{"n":3}`), call("meet", `{"n":3}`), call("meet", `{"n":3}`)),
		tools(call("attempt_completion", `{}`)),
		text("met"),
	)
	out, err := run.Start(context.Background(), h.opts, "meet")
	mustOutcome(t, out, err, run.StatusCompleted)
	for _, r := range h.srv.Requests()[1].LastResults() {
		if r.Content != `"met"` {
			t.Fatalf("results = %+v: the calls did not run concurrently", h.srv.Requests()[1].LastResults())
		}
	}
}

func TestForkDelegation(t *testing.T) {
	t.Parallel()
	for _, w := range wires[1:2] {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, w.provider, w.stream,
				tools(call("use_skill", `{"skill":"summarize","args":"the long text"}`)), // step 1, coordinator
				tools(call("attempt_completion", `{}`)),                                  // step 2, delegated
				text("a short summary"),                                                  // step 2's result
				tools(call("attempt_completion", `{}`)),                                  // step 3, coordinator
				text("done: a short summary"),
			)
			out, err := run.Start(context.Background(), h.opts, "summarize it")
			out = mustOutcome(t, out, err, run.StatusCompleted)
			if out.Steps != 3 || out.Result != "done: a short summary" {
				t.Fatalf("outcome %+v", out)
			}
			reqs := h.srv.Requests()
			sub := reqs[1]
			if len(sub.Messages) != 1 || strings.TrimSpace(sub.Messages[0].Text) != "Summarize the long text in one line." {
				t.Fatalf("delegated run saw %+v, want only the skill body", sub.Messages)
			}
			if len(sub.Tools) != 1 || sub.Tools[0] != "attempt_completion" {
				t.Fatalf("delegated run's tools = %v, want allowed-tools only", sub.Tools)
			}
			var res struct{ Result, Skill string }
			if err := json.Unmarshal([]byte(reqs[3].LastResults()[0].Content), &res); err != nil || res.Result != "a short summary" {
				t.Fatalf("use_skill result = %s", reqs[3].LastResults()[0].Content)
			}
			// Step numbers continue across runs of the job.
			steps := map[string][]int{}
			for _, e := range h.events(run.TypeModelReply) {
				steps[e.RunID] = append(steps[e.RunID], e.Step)
			}
			if len(steps) != 2 || len(steps[out.RunID]) != 3 || steps[out.RunID][0] != 1 || steps[out.RunID][2] != 3 {
				t.Fatalf("steps by run = %v", steps)
			}
			for id, s := range steps {
				if id != out.RunID && (s[0] != 2 || s[1] != 2) {
					t.Fatalf("delegated run took steps %v, want 2 and its result call", s)
				}
			}
			if d := h.events(run.TypeDelegate); len(d) != 1 || d[0].Skill != "summarize" {
				t.Fatalf("delegate events = %+v", d)
			}
		})
	}
}

func TestSlashInvocation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, query string
		want        error
		first       string
		tools       int // 0: every tool
	}{
		{name: "default skill", query: "/greeter Ada", first: "Say hello to Ada."},
		{name: "disable-model-invocation is for people", query: "/manual Bob", first: "Manual body for Bob."},
		{name: "fork skill runs with its body alone", query: "/summarize some words", first: "Summarize some words in one line.", tools: 1},
		{name: "user-invocable false is refused", query: "/hidden", want: run.ErrNotInvocable},
		{name: "unknown skill", query: "/nope x", want: run.ErrNoSkill},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, "openai", true, tools(call("attempt_completion", `{}`)), text("ok"))
			out, err := run.Start(context.Background(), h.opts, tc.query)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if _, err := os.Stat(filepath.Join(h.root, ".agent", "jobs")); err == nil {
					t.Fatal("a refused invocation created a job")
				}
				return
			}
			mustOutcome(t, out, err, run.StatusCompleted)
			req := h.srv.Requests()[0]
			if !strings.Contains(req.Messages[0].Text, tc.first) {
				t.Fatalf("first message = %q, want %q", req.Messages[0].Text, tc.first)
			}
			if tc.tools > 0 && len(req.Tools) != tc.tools {
				t.Fatalf("tools = %v", req.Tools)
			}
		})
	}
}

// TestNoModelNoJob: a run that cannot reach a model (none chosen, no key)
// says so and leaves no job folder, which --continue would otherwise find.
func TestNoModelNoJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, model string
		want        error
	}{
		{name: "no model chosen", model: "", want: run.ErrNoModel},
		{name: "no API key", model: "anthropic/claude-x", want: run.ErrMissingKey},
		{name: "unknown provider", model: "nope/x", want: run.ErrUnknownProvider},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, "openai", false)
			h.opts.Model = tc.model
			h.opts.NewModel = func(spec string) (run.Model, error) { return run.NewModel(spec, run.ClientOptions{}) }
			_, err := run.Start(context.Background(), h.opts, "hello")
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "no job was started") {
				t.Fatalf("err = %v, want it to say that no job was started", err)
			}
			if _, err := os.Stat(filepath.Join(h.root, ".agent", "jobs")); err == nil {
				t.Fatal("a run that could not start created a job folder")
			}
			if evs := h.events(run.TypeStartRun); len(evs) != 0 {
				t.Fatalf("start_run emitted: %v", evs)
			}
		})
	}
}

func TestInterruptThenContinue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "anthropic", false)
	marker := filepath.Join(t.TempDir(), "blocked")
	blockArgs, _ := json.Marshal(map[string]string{"marker": marker})
	h.srv.Push(
		tools(call("block", string(blockArgs)), call("todo", `{"add":["x"]}`)),
		tools(call("todo", `{"done":["x"]}`)),
		tools(call("attempt_completion", `{}`)),
		text("finished after the interrupt"),
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.onEvt = func(ev run.Event) {
		if ev.Type == run.TypeToolResult && ev.Tool == "todo" {
			cancel() // as SIGINT does, while block is still running
		}
	}
	out, err := run.Start(ctx, h.opts, "work")
	mustOutcome(t, out, err, run.StatusInterrupted)
	if !errors.Is(err, run.ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	h.mu.Lock()
	h.onEvt = nil
	h.mu.Unlock()
	// A new process: a new workspace (and plugin), the same state.
	h.opts.Workspace = newWorkspace(t)
	out, err = run.Continue(context.Background(), h.opts, "")
	out = mustOutcome(t, out, err, run.StatusCompleted)
	if out.Result != "finished after the interrupt" || out.Steps != 3 {
		t.Fatalf("outcome %+v", out)
	}
	var replayed []string
	for _, e := range h.events(run.TypeCallTool) {
		if e.Replayed {
			replayed = append(replayed, e.Tool)
		}
	}
	if len(replayed) != 2 || len(h.events(run.TypeResumeRun)) != 1 {
		t.Fatalf("replayed calls = %v", replayed)
	}
	if got := h.srv.Requests()[1].LastResults()[0].Content; got != `"went through"` {
		t.Fatalf("replayed block answered %s", got)
	}
}

func TestResumeFrom(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "openai", true,
		tools(call("use_skill", `{"skill":"greeter","args":["Ada"]}`)),
		tools(call("attempt_completion", `{}`)),
		text("first answer"),
	)
	out, err := run.Start(context.Background(), h.opts, "greet")
	mustOutcome(t, out, err, run.StatusCompleted)
	// The checkpoint written after step 1's tools answered.
	files, _ := filepath.Glob(filepath.Join(h.root, ".agent", "jobs", out.JobID, "runs", out.RunID, "checkpoint-*-1-*.json"))
	var from string
	for _, f := range files {
		var cp run.Checkpoint
		b, _ := os.ReadFile(f)
		if json.Unmarshal(b, &cp) == nil && cp.Status == run.StatusProceeding {
			from = cp.ID
		}
	}
	if from == "" {
		t.Fatalf("no proceeding checkpoint of step 1 among %v", files)
	}
	h.srv.Push(tools(call("attempt_completion", `{}`)), text("second answer"))
	out, err = run.ResumeFrom(context.Background(), h.opts, from, "")
	out = mustOutcome(t, out, err, run.StatusCompleted)
	if out.Result != "second answer" {
		t.Fatalf("outcome %+v", out)
	}
	// The model saw the history up to that checkpoint, not what came after.
	req := h.srv.Requests()[3]
	if n := len(req.Messages); n != 3 {
		t.Fatalf("resumed request has %d messages, want 3 (query, call, result)", n)
	}
	if _, err := run.ResumeFrom(context.Background(), h.opts, "nope", ""); !errors.Is(err, run.ErrCheckpointMissing) {
		t.Fatalf("unknown checkpoint: %v", err)
	}
	// A completed job does not resume without a new query.
	if _, err := run.Continue(context.Background(), h.opts, ""); !errors.Is(err, run.ErrJobCompleted) {
		t.Fatalf("continue of a completed job: %v", err)
	}
}
