package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentskills/agent/internal/workspace"
	"github.com/agentskills/agent/sdk"
)

// Error codes the runtime itself gives a tool call.
const (
	CodeMalformedCall = "malformed_tool_call"
	CodeNotApproved   = "not_approved"
	CodeDelegation    = "delegated_run_failed"
)

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
		if len(allowed) > 0 && !isAllowed(t, allowed) && t.Name != ToolAttemptCompletion {
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

// isAllowed matches a tool against allowed-tools entries: a bare name,
// skill.tool or skill__tool; a Claude Code pattern such as "Bash(git:*)"
// is matched by the name before the parenthesis.
func isAllowed(t *workspace.ToolRef, allowed []string) bool {
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		if i := strings.IndexByte(a, '('); i >= 0 {
			a = a[:i]
		}
		if strings.EqualFold(a, t.Name) || a == t.Qualified() || a == t.Exposed() {
			return true
		}
	}
	return false
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

// call runs one tool call. Every failure becomes an error result for the
// model: a run never ends because of a tool.
func (r *runner) call(ctx context.Context, rs *RunSetting, step int, c ToolCall) (content string, isErr, completed bool) {
	ws := r.o.Workspace
	args := bytes.TrimSpace([]byte(c.Args))
	if len(args) == 0 {
		args = []byte("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		why := "it is not a JSON object"
		if err != nil {
			why = err.Error()
		}
		return errorContent(CodeMalformedCall, fmt.Sprintf("the arguments of %s are not a JSON object (%s); call it again with a JSON object that matches its input schema", c.Name, why)), true, false
	}
	t, ok := ws.Tool(c.Name)
	if !ok {
		if c.Name == ToolAttemptCompletion {
			return "{}", false, true
		}
		return errorContent(sdk.CodeUnknownTool, fmt.Sprintf("there is no tool %q; call one of the tools you were given", c.Name)), true, false
	}
	if len(rs.AllowedTools) > 0 && !isAllowed(t, rs.AllowedTools) && t.Name != ToolAttemptCompletion {
		return errorContent(sdk.CodeUnknownTool, fmt.Sprintf("%s is not among this run's allowed tools (%s)", c.Name, strings.Join(rs.AllowedTools, ", "))), true, false
	}
	if t.Skill == workspace.BaseSkill && NeedsApproval[t.Name] && r.o.Approve != nil {
		if err := r.o.Approve(ctx, t.Name, string(args)); err != nil {
			return errorContent(CodeNotApproved, fmt.Sprintf("the user did not approve %s: %v", t.Name, err)), true, false
		}
	}
	timeout := r.o.CallTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := ws.Invoke(cctx, t, args)
	if err != nil {
		code, msg := workspace.Failure(cctx, t, err)
		return errorContent(code, msg), true, false
	}
	if t.Name == workspace.UseSkillTool && t.Skill == workspace.BuiltinSkill {
		var ins workspace.Instructions
		if json.Unmarshal(res.Value, &ins) == nil && ins.Context == "fork" {
			return r.delegate(ctx, rs, ins)
		}
	}
	content = string(res.Value)
	if len(bytes.TrimSpace(res.Value)) == 0 {
		content = "null"
	}
	if res.Message != "" {
		b, _ := json.Marshal(map[string]any{"result": json.RawMessage(content), "message": res.Message})
		content = string(b)
	}
	if t.Name == ToolAttemptCompletion {
		completed = noOpenTodos(res.Value)
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
func (r *runner) delegate(ctx context.Context, parent *RunSetting, ins workspace.Instructions) (string, bool, bool) {
	rs := &RunSetting{
		JobID: r.job.ID, RunID: newID(), ParentRunID: parent.RunID, Query: ins.Instructions,
		Skill: ins.Skill, Model: r.job.Model, AllowedTools: ins.AllowedTools, CreatedAt: time.Now().UTC(),
	}
	if err := r.o.Store.SaveRunSetting(rs); err != nil {
		return errorContent(CodeDelegation, err.Error()), true, false
	}
	cp := &Checkpoint{JobID: r.job.ID, RunID: rs.RunID, Status: StatusProceeding, Step: r.job.Steps, Messages: []Message{{Role: RoleUser, Text: ins.Instructions}}}
	if err := r.save(cp); err != nil {
		return errorContent(CodeDelegation, err.Error()), true, false
	}
	r.emit(Event{Type: TypeDelegate, RunID: parent.RunID, Step: r.job.Steps, Skill: ins.Skill, Delegated: rs.RunID})
	r.emit(Event{Type: TypeStartRun, RunID: rs.RunID, Step: r.job.Steps, Model: r.job.Model, Query: ins.Instructions, Skill: ins.Skill})
	result, status, err := r.loop(ctx, rs, cp)
	if err != nil {
		return errorContent(CodeDelegation, fmt.Sprintf("the delegated run of %s stopped (%s): %v", ins.Skill, status, err)), true, false
	}
	b, _ := json.Marshal(map[string]string{"skill": ins.Skill, "run_id": rs.RunID, "result": result})
	return string(b), false, false
}
