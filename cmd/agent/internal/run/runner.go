package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/disclosure"
)

// Options configure a run. Workspace, Store and NewModel are required.
type Options struct {
	Workspace *workspace.Workspace
	Store     *Store
	// NewModel builds the client of PROVIDER/MODEL.
	NewModel func(spec string) (Model, error)
	// Model is PROVIDER/MODEL; when resuming, "" keeps the job's.
	Model string
	// Instruction opens the system prompt, before Layer 1.
	Instruction string
	// MaxSteps bounds the steps of the whole job; 0 means no bound (when
	// resuming: keep the job's).
	MaxSteps int
	// Approve is asked before a tool that changes the workspace runs
	// (workspace.NeedsApproval); nil approves everything. An error is returned to
	// the model as not_approved. args is the whole call as it will run,
	// with control characters escaped: show all of it.
	Approve func(ctx context.Context, tool string, args string) error
	// OnEvent receives every event as it happens (stdout, a progress view).
	OnEvent func(Event)
	// CallTimeout bounds one tool call; 0 keeps the workspace's deadline
	// policy (workspace.CallOptions.Timeout).
	CallTimeout time.Duration
	// Layer1Budget is the character budget of Layer 1; 0 means 16,000.
	Layer1Budget int
}

// Outcome is how a job ended (or paused).
type Outcome struct {
	JobID  string
	RunID  string
	Status string
	Result string
	Steps  int
}

// Errors a run ends with.
var (
	ErrMaxSteps     = errors.New("the job reached --max-steps")
	ErrInterrupted  = errors.New("the run was interrupted")
	ErrNotInvocable = errors.New("skill cannot be invoked")
	ErrNoSkill      = errors.New("no such skill")
)

// Tools the runtime treats specially.
const (
	ToolAttemptCompletion = "attempt_completion"
)

type runner struct {
	o     Options
	model Model
	job   *Job

	mu sync.Mutex // guards job.Steps and job writes: delegated runs share them
}

// Start runs query as a new job. A query "/name args" invokes that skill
// as a person would (§10 trigger matrix).
func Start(ctx context.Context, o Options, query string) (*Outcome, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("the query is empty: agent run \"what to do\"")
	}
	// A run that cannot reach a model leaves no job behind: there would be
	// nothing to resume, and an empty job would be the one --continue finds.
	m, err := o.NewModel(o.Model)
	if err != nil {
		return nil, fmt.Errorf("%w; no job was started", err)
	}
	now := time.Now().UTC()
	job := &Job{ID: newJobID(now), Model: o.Model, MaxSteps: o.MaxSteps, Status: StatusProceeding, CreatedAt: now}
	r := &runner{o: o, job: job, model: m}
	rs := &RunSetting{JobID: job.ID, RunID: newID(), Query: query, Model: o.Model, Instruction: o.Instruction, CreatedAt: now}
	first := query
	if strings.HasPrefix(query, "/") {
		inv, err := r.slash(query)
		if err != nil {
			return nil, err
		}
		rs.Skill, rs.AllowedTools, first = inv.Skill, inv.AllowedTools, inv.query
	}
	job.Coordinator = rs.RunID
	if err := o.Store.SaveJob(job); err != nil {
		return nil, err
	}
	if err := o.Store.SaveRunSetting(rs); err != nil {
		return nil, err
	}
	cp := &Checkpoint{JobID: job.ID, RunID: rs.RunID, Status: StatusProceeding, Messages: []Message{{Role: RoleUser, Text: first}}}
	if err := o.Store.SaveCheckpoint(cp); err != nil {
		return nil, err
	}
	r.emit(Event{Type: TypeStartRun, RunID: rs.RunID, Model: o.Model, Query: query, Skill: rs.Skill})
	return r.finish(ctx, rs, cp)
}

// Continue resumes the last job's coordinator from its last checkpoint.
// A non-empty query is added as a new user message (to go on after a
// completed job).
func Continue(ctx context.Context, o Options, query string) (*Outcome, error) {
	job, err := o.Store.LastJob()
	if err != nil {
		return nil, err
	}
	cp, err := o.Store.LastCheckpoint(job.ID, job.Coordinator)
	if err != nil {
		return nil, err
	}
	return resume(ctx, o, job, cp, query)
}

// ResumeFrom resumes from one checkpoint, of the coordinator or of a
// delegated run.
func ResumeFrom(ctx context.Context, o Options, checkpointID, query string) (*Outcome, error) {
	cp, err := o.Store.FindCheckpoint(checkpointID)
	if err != nil {
		return nil, err
	}
	job, err := o.Store.LoadJob(cp.JobID)
	if err != nil {
		return nil, err
	}
	return resume(ctx, o, job, cp, query)
}

func resume(ctx context.Context, o Options, job *Job, cp *Checkpoint, query string) (*Outcome, error) {
	rs, err := o.Store.LoadRunSetting(job.ID, cp.RunID)
	if err != nil {
		return nil, err
	}
	if o.Model != "" {
		job.Model = o.Model
	}
	if o.MaxSteps > 0 {
		job.MaxSteps = o.MaxSteps
	}
	o.Model = job.Model
	if o.Instruction == "" {
		o.Instruction = rs.Instruction
	}
	// The step count is what the checkpoints recorded: a step interrupted
	// before its checkpoint is taken again under the same number.
	job.Steps = o.Store.maxStep(job.ID)
	r := &runner{o: o, job: job}
	switch cp.Status {
	case StatusCompleted:
		if strings.TrimSpace(query) == "" {
			return nil, fmt.Errorf("%w: job %s completed with its result; start a new run, or pass a query to --continue to go on from it", ErrJobCompleted, job.ID)
		}
	case StatusMaxSteps, StatusFailed, StatusInterrupted:
		cp.Status = StatusProceeding
	}
	if strings.TrimSpace(query) != "" {
		if cp.Status == StatusCallingTools {
			return nil, fmt.Errorf("job %s stopped in the middle of a step; run --continue without a query first to finish it", job.ID)
		}
		cp.Status, cp.Completing, cp.Idle = StatusProceeding, false, 0
		cp.Messages = append(cp.Messages, Message{Role: RoleUser, Text: query})
	}
	from := cp.ID
	cp.ID = ""
	job.Status = StatusProceeding
	r.emit(Event{Type: TypeResumeRun, RunID: rs.RunID, Step: cp.Step, Model: job.Model, Checkpoint: from, Query: query})
	return r.finish(ctx, rs, cp)
}

// finish runs the coordinator to its end and records the job's outcome.
func (r *runner) finish(ctx context.Context, rs *RunSetting, cp *Checkpoint) (*Outcome, error) {
	if r.model == nil {
		m, err := r.o.NewModel(r.job.Model)
		if err != nil {
			r.stopJob(StatusFailed, "")
			return nil, err
		}
		r.model = m
	}
	result, status, err := r.loop(ctx, rs, cp)
	r.stopJob(status, result)
	out := &Outcome{JobID: r.job.ID, RunID: rs.RunID, Status: status, Result: result, Steps: r.job.Steps}
	return out, err
}

func (r *runner) stopJob(status, result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.job.Status = status
	r.job.Result = result
	_ = r.o.Store.SaveJob(r.job)
}

// nextStep takes the job's next step number, or reports that --max-steps
// is reached.
func (r *runner) nextStep() (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.job.MaxSteps > 0 && r.job.Steps >= r.job.MaxSteps {
		return r.job.Steps, false
	}
	// job.json is not rewritten here: a resume counts steps from the
	// checkpoints, which is one sync less per step.
	r.job.Steps++
	return r.job.Steps, true
}

// nudge is the answer to a turn without a tool call.
const nudge = "You did not call a tool. Go on with the task, or call attempt_completion when it is done."

// finalAsk asks for the run result once attempt_completion found no open
// todo.
const finalAsk = "All todos are done. Write the final result of the task for the user now, in plain text, without calling tools."

// loop runs one run (the coordinator or a delegated one) from cp to its
// end: its result, its final status, and an error for every status but
// completed. The run is an invoke_agent span; its model calls and tool
// calls are children.
func (r *runner) loop(ctx context.Context, rs *RunSetting, cp *Checkpoint) (string, string, error) {
	ctx, span := startAgentSpan(ctx, rs, r.model.Name())
	before := cp.Usage
	result, status, err := r.steps(ctx, rs, cp)
	used := Usage{InputTokens: cp.Usage.InputTokens - before.InputTokens, OutputTokens: cp.Usage.OutputTokens - before.OutputTokens}
	endAgentSpan(span, used, status, err)
	return result, status, err
}

func (r *runner) steps(ctx context.Context, rs *RunSetting, cp *Checkpoint) (string, string, error) {
	tools := r.toolSpecs(rs.AllowedTools)
	system := r.systemPrompt(rs)
	replayed := cp.Status == StatusCallingTools
	for {
		if cp.Status == StatusCallingTools {
			results, done := r.act(ctx, rs, cp.Step, cp.Pending, replayed)
			replayed = false
			if ctx.Err() != nil {
				r.emit(Event{Type: TypeInterrupt, RunID: rs.RunID, Step: cp.Step})
				return "", StatusInterrupted, fmt.Errorf("%w at step %d", ErrInterrupted, cp.Step)
			}
			cp.Messages = append(cp.Messages, Message{Role: RoleUser, ToolResults: results})
			if done {
				cp.Completing = true
				cp.Messages[len(cp.Messages)-1].Text = finalAsk
			}
			cp.Status, cp.Pending = StatusProceeding, nil
			if err := r.save(cp); err != nil {
				return "", StatusFailed, err
			}
			continue
		}
		var step int
		if cp.Completing {
			// The call that writes the result is part of the step that
			// completed, and is not refused by --max-steps.
			step = cp.Step
		} else {
			var ok bool
			if step, ok = r.nextStep(); !ok {
				cp.Status = StatusMaxSteps
				_ = r.save(cp)
				r.emit(Event{Type: TypeMaxSteps, RunID: rs.RunID, Step: step})
				return "", StatusMaxSteps, fmt.Errorf("%w (%d steps)", ErrMaxSteps, r.job.MaxSteps)
			}
		}
		chatCtx, chat := startChatSpan(ctx, r.model.Name())
		reply, err := r.model.Turn(chatCtx, Request{System: system, Messages: cp.Messages, Tools: tools}, func(s string) {
			r.emit(Event{Type: TypeText, RunID: rs.RunID, Step: step, Text: s})
		})
		endChatSpan(chat, reply, err)
		if err != nil {
			if ctx.Err() != nil {
				r.emit(Event{Type: TypeInterrupt, RunID: rs.RunID, Step: step})
				return "", StatusInterrupted, fmt.Errorf("%w at step %d", ErrInterrupted, step)
			}
			r.emit(Event{Type: TypeError, RunID: rs.RunID, Step: step, Error: err.Error()})
			return "", StatusFailed, err
		}
		names := make([]string, len(reply.ToolCalls))
		for i, c := range reply.ToolCalls {
			names[i] = c.Name
		}
		r.emit(Event{Type: TypeModelReply, RunID: rs.RunID, Step: step, Text: reply.Text, ToolCall: names, Usage: &reply.Usage})
		cp.Step = step
		cp.Usage.InputTokens += reply.Usage.InputTokens
		cp.Usage.OutputTokens += reply.Usage.OutputTokens
		cp.Messages = append(cp.Messages, Message{Role: RoleAssistant, Text: reply.Text, ToolCalls: reply.ToolCalls})
		switch {
		case cp.Completing:
			return r.complete(rs, cp, reply.Text)
		case len(reply.ToolCalls) == 0:
			cp.Idle++
			r.emit(Event{Type: TypeNoToolCall, RunID: rs.RunID, Step: step, Text: reply.Text})
			if cp.Idle >= 2 {
				return r.complete(rs, cp, reply.Text)
			}
			cp.Messages = append(cp.Messages, Message{Role: RoleUser, Text: nudge})
			cp.Status = StatusProceeding
		default:
			cp.Idle = 0
			cp.Status, cp.Pending = StatusCallingTools, reply.ToolCalls
		}
		if err := r.save(cp); err != nil {
			return "", StatusFailed, err
		}
	}
}

func (r *runner) complete(rs *RunSetting, cp *Checkpoint, result string) (string, string, error) {
	cp.Status, cp.Result, cp.Pending = StatusCompleted, result, nil
	if err := r.save(cp); err != nil {
		return "", StatusFailed, err
	}
	r.emit(Event{Type: TypeCompleteRun, RunID: rs.RunID, Step: cp.Step, Result: result})
	return result, StatusCompleted, nil
}

func (r *runner) save(cp *Checkpoint) error {
	cp.ID = ""
	return r.o.Store.SaveCheckpoint(cp)
}

// maxStep is the highest step any checkpoint of the job recorded.
func (s *Store) maxStep(job string) int {
	files, _ := filepath.Glob(filepath.Join(s.jobDir(job), "runs", "*", "checkpoint-*.json"))
	high := 0
	for _, f := range files {
		parts := strings.Split(strings.TrimSuffix(filepath.Base(f), ".json"), "-")
		if len(parts) == 4 {
			if n, err := strconv.Atoi(parts[2]); err == nil && n > high {
				high = n
			}
		}
	}
	return high
}

// invocation is a `/name args` query resolved to its skill.
type invocation struct {
	Skill        string
	AllowedTools []string
	query        string
}

// slash resolves "/name args" as a person's invocation of the skill: the
// trigger matrix of §10 applies (user-invocable: false is refused). The
// run's query becomes the skill's instructions with args substituted; a
// `context: fork` skill also limits the run's tools to allowed-tools, as
// its delegated run would.
func (r *runner) slash(query string) (*invocation, error) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(query, "/"), " ")
	ws := r.o.Workspace
	as := ws.Skill(name)
	if as == nil {
		return nil, fmt.Errorf("%w: /%s is not an active skill; 'agent skill list' shows what is installed and AGENT_SKILLS what is active", ErrNoSkill, name)
	}
	if err := disclosure.Check(as.Entry.Canonical, workspace.Triggers(as.Manifest), disclosure.Person); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotInvocable, err)
	}
	ins := workspace.Layer2(*as.Entry, as.Manifest, strings.Fields(rest))
	inv := &invocation{Skill: ins.Skill, query: ins.Instructions}
	if ins.Context == "fork" {
		inv.AllowedTools = ins.AllowedTools
	} else {
		inv.query = fmt.Sprintf("The user invoked the skill %s with /%s %s. Follow its instructions:\n\n%s", ins.Skill, name, rest, ins.Instructions)
	}
	return inv, nil
}

// systemPrompt is the instruction plus Layer 1 of the active skills.
func (r *runner) systemPrompt(rs *RunSetting) string {
	var b strings.Builder
	instr := rs.Instruction
	if instr == "" {
		instr = r.o.Instruction
	}
	if instr == "" {
		instr = DefaultInstruction
	}
	b.WriteString(instr)
	if text := r.layer1(); text != "" {
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	return b.String()
}

// DefaultInstruction is the system prompt's opening without --instruction.
const DefaultInstruction = "You are an agent working on a task with tools. Work step by step: call tools to act, keep a todo list for longer tasks, and call attempt_completion when the task is done."

func (r *runner) layer1() string {
	budget := r.o.Layer1Budget
	if budget <= 0 {
		budget = 16000
	}
	text, _, _, err := r.o.Workspace.Layer1(budget)
	if err != nil {
		return ""
	}
	return text
}
