package run

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/sdk"
)

// CodeDelegation is the code of a tool call whose delegated run failed.
const CodeDelegation = "delegated_run_failed"

// attemptCompletionInfo describes the runtime's own attempt_completion,
// offered only when no active skill (normally base) provides one.
var attemptCompletionInfo = sdk.ToolInfo{
	Name:        ToolAttemptCompletion,
	Description: "Call when the task is done. Returns the open todos, or {} when none is left; then write the final result.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
}

// toolSpecs are the tools a run offers the model: the workspace's index
// by the names model clients accept, limited to allowed (a fork skill's
// allowed-tools) when set. attempt_completion is always offered.
func (r *runner) toolSpecs(allowed []string) []ToolSpec {
	var out []ToolSpec
	have := false
	for _, t := range r.o.Workspace.Tools {
		if len(allowed) > 0 && !t.AllowedBy(allowed) && t.Name != ToolAttemptCompletion {
			continue
		}
		if t.Name == ToolAttemptCompletion {
			have = true
		}
		out = append(out, ToolSpec{Name: t.Exposed(), Description: t.Info.Description, InputSchema: t.Info.InputSchema})
	}
	if !have {
		i := attemptCompletionInfo
		out = append(out, ToolSpec{Name: i.Name, Description: i.Description, InputSchema: i.InputSchema})
	}
	return out
}

// act runs a step's tool calls concurrently and returns their results in
// call order, and whether attempt_completion found no open todo.
func (r *runner) act(ctx context.Context, rs *RunSetting, step int, calls []ToolCall, replayed bool) ([]ToolResult, bool) {
	results := make([]ToolResult, len(calls))
	completed := make([]bool, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.emit(Event{Type: TypeCallTool, RunID: rs.RunID, Step: step, CallID: c.ID, Tool: c.Name, Args: argsJSON(c.Args), Replayed: replayed})
			content, isErr, done := r.call(ctx, rs, step, c)
			results[i] = ToolResult{ID: c.ID, Name: c.Name, Content: content, IsError: isErr}
			completed[i] = done
			r.emit(Event{Type: TypeToolResult, RunID: rs.RunID, Step: step, CallID: c.ID, Tool: c.Name, Result: content, IsError: isErr, Replayed: replayed})
		}()
	}
	wg.Wait()
	done := false
	for _, d := range completed {
		done = done || d
	}
	return results, done
}

func errorContent(code, msg string) string {
	b, _ := json.Marshal(sdk.Error{Code: code, Message: msg})
	return string(b)
}

// call runs one tool call through the workspace's call path. Every
// failure becomes an error result for the model: a run never ends because
// of a tool.
func (r *runner) call(ctx context.Context, rs *RunSetting, step int, c ToolCall) (content string, isErr, completed bool) {
	opts := workspace.CallOptions{
		Timeout: r.o.CallTimeout,
		Approve: r.o.Approve,
		CallID:  c.ID,
		Delegate: func(ctx context.Context, ins workspace.Instructions) (sdk.Result, error) {
			return r.delegate(ctx, rs, ins)
		},
	}
	if len(rs.AllowedTools) > 0 {
		// The runtime's own way to finish stays open to a delegated run.
		opts.AllowedTools = append(slices.Clone(rs.AllowedTools), ToolAttemptCompletion)
	}
	out := r.o.Workspace.Call(ctx, c.Name, json.RawMessage(c.Args), opts)
	if !out.OK() {
		if out.Tool == nil && out.Code == sdk.CodeUnknownTool && c.Name == ToolAttemptCompletion {
			// No active skill provides it: the runtime's own (toolSpecs).
			return "{}", false, true
		}
		return errorContent(out.Code, out.Message), true, false
	}
	content = string(out.Value)
	if out.Message != "" {
		b, _ := json.Marshal(map[string]any{"result": out.Value, "message": out.Message})
		content = string(b)
	}
	if out.Tool.Name == ToolAttemptCompletion {
		completed = noOpenTodos(out.Value)
	}
	return content, false, completed
}

// noOpenTodos reads attempt_completion's answer: {} (or null) when the task
// may end, else the remaining todos.
func noOpenTodos(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || string(v) == "null" {
		return true
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(v, &obj); err != nil {
		return false
	}
	for _, val := range obj {
		s := string(bytes.TrimSpace(val))
		if s != "[]" && s != "null" && s != "{}" && s != "0" && s != `""` {
			return false
		}
	}
	return true
}

// delegate runs a `context: fork` skill as a delegated run of the same job:
// its body is the whole query (no parent history), its steps continue the
// job's count, and its result is the tool result.
func (r *runner) delegate(ctx context.Context, parent *RunSetting, ins workspace.Instructions) (sdk.Result, error) {
	rs := &RunSetting{
		JobID: r.job.ID, RunID: newID(), ParentRunID: parent.RunID, Query: ins.Instructions,
		Skill: ins.Skill, Model: r.job.Model, AllowedTools: ins.AllowedTools, CreatedAt: time.Now().UTC(),
	}
	if err := r.o.Store.SaveRunSetting(rs); err != nil {
		return sdk.Result{}, sdk.Errorf(CodeDelegation, "%v", err)
	}
	cp := &Checkpoint{JobID: r.job.ID, RunID: rs.RunID, Status: StatusProceeding, Step: r.job.Steps, Messages: []Message{{Role: RoleUser, Text: ins.Instructions}}}
	if err := r.save(cp); err != nil {
		return sdk.Result{}, sdk.Errorf(CodeDelegation, "%v", err)
	}
	r.emit(Event{Type: TypeDelegate, RunID: parent.RunID, Step: r.job.Steps, Skill: ins.Skill, Delegated: rs.RunID})
	r.emit(Event{Type: TypeStartRun, RunID: rs.RunID, Step: r.job.Steps, Model: r.job.Model, Query: ins.Instructions, Skill: ins.Skill})
	result, status, err := r.loop(ctx, rs, cp)
	if err != nil {
		return sdk.Result{}, sdk.Errorf(CodeDelegation, "the delegated run of %s stopped (%s): %v", ins.Skill, status, err)
	}
	b, _ := json.Marshal(map[string]string{"skill": ins.Skill, "run_id": rs.RunID, "result": result})
	return sdk.Result{Value: b}, nil
}
