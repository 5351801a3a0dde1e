package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentskills/agent/internal/ground/semconv"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// Codes of a call refused by the call path itself.
const (
	// CodeNotApproved: CallOptions.Approve said no (SPEC §16).
	CodeNotApproved = "not_approved"
)

// Deadline policy (SPEC §2): a call gets DefaultCallFloor, or Config.CallFloor
// when set; a script tool gets at least the script's own limit plus
// ScriptGrace, so that the script plugin reports the script's timeout
// rather than the host killing the call first.
const (
	DefaultCallFloor = 5 * time.Minute
	ScriptGrace      = 15 * time.Second
)

// NeedsApproval lists the base tools that change the workspace or run
// commands: CallOptions.Approve is asked before they run.
var NeedsApproval = map[string]bool{"exec": true, "shell_command": true, "write_file": true, "edit_file": true, "apply_patch": true}

// CallOptions are what a front end decides about one call. The zero value
// is a plain call under the deadline policy.
type CallOptions struct {
	// Timeout replaces the deadline policy when positive (`agent call
	// --timeout`, `agent mcp --call-timeout`).
	Timeout time.Duration
	// AllowedTools, when not empty, refuses every tool it does not name:
	// a delegated run of a `context: fork` skill (see ToolRef.AllowedBy).
	AllowedTools []string
	// Approve is asked before a tool in NeedsApproval of the base skill
	// runs; nil approves. Its error refuses the call with CodeNotApproved.
	// args is the whole call as it will run, control characters escaped:
	// show all of it, for what is approved is exactly what runs.
	Approve func(ctx context.Context, tool, args string) error
	// Delegate runs a `context: fork` skill that use_skill returned, and
	// its result is the call's. nil returns the instructions, with the
	// fork note as the message, for the caller to start its own sub-task
	// (SPEC §10).
	Delegate func(ctx context.Context, ins Instructions) (sdk.Result, error)
	// CallID names the call in CallEvents; "" when the front end has none.
	CallID string
}

// Outcome is what became of one call: a result, or a code and a message
// that says what to do next. Front ends render it and decide nothing.
type Outcome struct {
	// Tool is what the name resolved to; nil when it did not resolve.
	Tool *ToolRef
	// Value is the result's JSON ("null" for none) when Code is "".
	Value json.RawMessage
	// Message is the tool's message on success, the explanation otherwise.
	Message string
	// Code is "" on success, else an sdk code or one of this package's.
	Code string
	// Err is the error behind a failure, for a front end that adds its own
	// advice to CodeHostError; nil on success.
	Err error
}

// OK reports whether the call succeeded.
func (o Outcome) OK() bool { return o.Code == "" }

// CallEvent names one call for a CallObserver.
type CallEvent struct {
	Name   string // as the caller gave it
	Tool   string // the resolved tool's name; "" when it did not resolve
	Skill  string // the resolved tool's skill; "" when it did not resolve
	CallID string // CallOptions.CallID
}

// CallObserver hears every call made through Workspace.Call: CallStart once
// the name is resolved and CallEnd with the outcome, from the same
// goroutine. The context CallStart returns is the one the call runs
// under, so that a tracer can put its span there and have it reach the
// plugin. Implementations must be safe for concurrent calls.
type CallObserver interface {
	CallStart(ctx context.Context, ev CallEvent) context.Context
	CallEnd(ctx context.Context, ev CallEvent, out Outcome)
}

// Observers is one CallObserver that tells each of obs in turn (CallStart
// in order, CallEnd in reverse, as nested spans end); nil ones are left
// out, and none gives nil.
func Observers(obs ...CallObserver) CallObserver {
	var all observers
	for _, o := range obs {
		switch o := o.(type) {
		case nil:
		case observers:
			all = append(all, o...)
		default:
			all = append(all, o)
		}
	}
	switch len(all) {
	case 0:
		return nil
	case 1:
		return all[0]
	}
	return all
}

type observers []CallObserver

func (all observers) CallStart(ctx context.Context, ev CallEvent) context.Context {
	for _, o := range all {
		ctx = o.CallStart(ctx, ev)
	}
	return ctx
}

func (all observers) CallEnd(ctx context.Context, ev CallEvent, out Outcome) {
	for i := len(all) - 1; i >= 0; i-- {
		all[i].CallEnd(ctx, ev, out)
	}
}

// Call is the only way a front end calls a tool: it normalises args,
// resolves name, applies the allowed-tools limit, approval and the
// deadline policy, invokes the tool, runs a fork skill's delegation and
// maps every failure to a code. It never returns a Go error: a failure is
// an Outcome the caller shows to the model or the person.
func (ws *Workspace) Call(ctx context.Context, name string, rawArgs json.RawMessage, opts CallOptions) Outcome {
	ev := CallEvent{Name: name, CallID: opts.CallID}
	args, argErr := normaliseArgs(name, rawArgs)
	t, resErr := ws.Resolve(name)
	if t != nil {
		ev.Tool, ev.Skill = t.Name, t.Skill
	}
	ctx, span := startToolSpan(ctx, ev)
	defer span.End()
	if obs := ws.Config.Observer; obs != nil {
		ctx = obs.CallStart(ctx, ev)
		out := ws.call(ctx, t, args, argErr, resErr, opts)
		obs.CallEnd(ctx, ev, out)
		endToolSpan(span, out)
		return out
	}
	out := ws.call(ctx, t, args, argErr, resErr, opts)
	endToolSpan(span, out)
	return out
}

var tracer = otel.Tracer(semconv.Scope)

// startToolSpan starts the GenAI execute_tool span of one call. With
// tracing off the global tracer is a no-op and nothing here allocates
// attributes.
func startToolSpan(ctx context.Context, ev CallEvent) (context.Context, trace.Span) {
	name := ev.Tool
	if name == "" {
		name = ev.Name
	}
	ctx, span := tracer.Start(ctx, semconv.OpExecuteTool+" "+name)
	if span.IsRecording() {
		span.SetAttributes(semconv.GenAIOperationName.String(semconv.OpExecuteTool), semconv.GenAIToolName.String(name))
		if ev.Skill != "" {
			span.SetAttributes(semconv.GenAISkillName.String(ev.Skill))
		}
		if ev.CallID != "" {
			span.SetAttributes(semconv.GenAIToolCallID.String(ev.CallID))
		}
	}
	return ctx, span
}

// endToolSpan records a failed outcome's code as error.type.
func endToolSpan(span trace.Span, out Outcome) {
	if out.Code == "" || !span.IsRecording() {
		return
	}
	span.SetAttributes(semconv.ErrorType.String(out.Code))
	span.SetStatus(codes.Error, out.Message)
}

func (ws *Workspace) call(ctx context.Context, t *ToolRef, args json.RawMessage, argErr, resErr error, opts CallOptions) Outcome {
	switch {
	case argErr != nil:
		return failed(t, sdk.CodeInvalidArgs, argErr.Error(), argErr)
	case resErr != nil:
		var se *sdk.Error
		if errors.As(resErr, &se) {
			return failed(nil, se.Code, se.Message, resErr)
		}
		return failed(nil, sdk.CodeUnknownTool, resErr.Error(), resErr)
	case len(opts.AllowedTools) > 0 && !t.AllowedBy(opts.AllowedTools):
		return failed(t, CodePermissionDenied, fmt.Sprintf("%s is not among the tools this task may use (allowed-tools: %s); call one of those", t.Qualified(), strings.Join(opts.AllowedTools, ", ")), nil)
	}
	if t.Skill == BaseSkill && NeedsApproval[t.Name] && opts.Approve != nil {
		shown, err := approvalArgs(args)
		if err != nil {
			return failed(t, sdk.CodeInvalidArgs, fmt.Sprintf("the arguments of %s are not one JSON object (%v); call it again with a JSON object that matches its input schema", t.Name, err), err)
		}
		args = shown // what the user approves is what runs
		if err := opts.Approve(ctx, t.Name, string(args)); err != nil {
			return failed(t, CodeNotApproved, fmt.Sprintf("the user did not approve %s: %v", t.Name, err), err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, ws.deadline(t, opts.Timeout))
	defer cancel()
	res, err := ws.invoke(cctx, t, args)
	if err == nil && opts.Delegate != nil && t.Skill == BuiltinSkill && t.Name == UseSkillTool {
		var ins Instructions
		if json.Unmarshal(res.Value, &ins) == nil && ins.Context == "fork" {
			// The delegated run is a task of its own, not bound by this
			// call's deadline: the caller's context alone ends it.
			res, err = opts.Delegate(ctx, ins)
		}
	}
	if err != nil {
		code, msg := Failure(cctx, t, err)
		if code == sdk.CodeCanceled && ctx.Err() == nil {
			// Nobody canceled this call: gRPC reports the calls in flight
			// when a crashed plugin's connection was torn down as
			// canceled. To the caller it is the crash.
			code = sdk.CodePluginCrashed
			msg = fmt.Sprintf("the %s plugin stopped while %s ran (%s); it starts again on the next call", t.Skill, t.Name, msg)
		}
		return failed(t, code, msg, err)
	}
	value := json.RawMessage(bytes.TrimSpace(res.Value))
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	return Outcome{Tool: t, Value: value, Message: res.Message}
}

func failed(t *ToolRef, code, msg string, err error) Outcome {
	return Outcome{Tool: t, Code: code, Message: msg, Err: err}
}

// deadline is the policy of SPEC §2: the floor, and for the script tools
// at least the script's own limit plus ScriptGrace.
func (ws *Workspace) deadline(t *ToolRef, override time.Duration) time.Duration {
	if override > 0 {
		return override
	}
	d := ws.Config.CallFloor
	if d <= 0 {
		d = DefaultCallFloor
	}
	if t.Plugin == ExecPlugin && ws.Config.ScriptTimeout > 0 {
		d = max(d, ws.Config.ScriptTimeout+ScriptGrace)
	}
	return d
}

// normaliseArgs makes a tool's arguments a JSON object: nothing (or null)
// is {}, anything but an object is refused.
func normaliseArgs(name string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	// An object is passed on as it is: checking it is cheaper than
	// decoding it, and this runs on every call. Decoding is only for the
	// error's wording.
	if raw[0] == '{' && json.Valid(raw) {
		return raw, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		why := "it is not a JSON object"
		if err != nil {
			why = err.Error()
		}
		return nil, fmt.Errorf("the arguments of %s must be a JSON object such as {\"name\": \"Ada\"} (%s); call it again with an object that matches its input schema", name, why)
	}
	return raw, nil
}

// AllowedBy matches the tool against allowed-tools entries: a bare name
// (any case), skill.tool or skill__tool; a Claude Code pattern such as
// "Bash(git:*)" is matched by the name before the parenthesis.
func (t *ToolRef) AllowedBy(allowed []string) bool {
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

// Resolve finds the tool a name means: a bare tool name, skill.tool, or the
// name Exposed gives (skill__tool, cut with a hash when long). When none
// is active it says why: an *sdk.Error with CodePermissionDenied for a
// tool of an untrusted skill, else an error matching ErrToolNotActive
// (with the skill that has it and how to activate it) or ErrUnknownTool.
func (ws *Workspace) Resolve(name string) (*ToolRef, error) {
	if t, ok := ws.lookup(name); ok {
		return t, nil
	}
	return nil, ws.unresolved(name)
}

func (ws *Workspace) lookup(name string) (*ToolRef, bool) {
	if t, ok := ws.byName[name]; ok {
		return t, true
	}
	byExposed, byQualified := ws.names()
	if t, ok := byExposed[name]; ok {
		return t, true
	}
	if skill, tool, ok := strings.Cut(name, "."); ok {
		if canon, err := manifest.Canonical(skill); err == nil {
			t, ok := byQualified[canon+"."+tool]
			return t, ok
		}
	}
	return nil, false
}
