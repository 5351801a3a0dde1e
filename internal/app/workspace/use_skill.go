package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentskills/agent/internal/disclosure"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// Error codes of use_skill beyond the sdk's.
const (
	CodeSkillNotFound          = "not_found"
	CodeModelInvocationRefused = "model_invocation_disabled"
)

// useSkillArgs accepts {"skill": name, "args": [..] or "..."}; "name" and
// "arguments" are accepted as aliases so that either schema spelling works.
type useSkillArgs struct {
	Skill     string          `json:"skill"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Arguments json.RawMessage `json:"arguments"`
}

// useSkill is the built-in use_skill tool: Layer 2 for a model. It returns
// the active skill's SKILL.md body with its arguments substituted, plus
// context/agent/model so that a caller can run a `context: fork` skill in a
// sub-agent. Skills with disable-model-invocation: true are refused with
// the structured error model_invocation_disabled. Of the skill only its
// SKILL.md is read, and only when the workspace has it from the registry's
// listing (no body).
func useSkill(ctx context.Context, ws *Workspace, raw json.RawMessage) (sdk.Result, error) {
	var in useSkillArgs
	dec := json.NewDecoder(bytes.NewReader(orEmptyObject(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return sdk.Result{}, sdk.Errorf(sdk.CodeInvalidArgs, "use_skill takes {\"skill\": \"<name>\", \"args\": [\"...\"]}: %v", err)
	}
	name := in.Skill
	if name == "" {
		name = in.Name
	}
	if name == "" {
		return sdk.Result{}, sdk.Errorf(sdk.CodeInvalidArgs, "skill is required: use_skill {\"skill\": \"<name>\"}")
	}
	rawArgs := in.Args
	if len(rawArgs) == 0 {
		rawArgs = in.Arguments
	}
	args, err := decodeSkillArgs(rawArgs)
	if err != nil {
		return sdk.Result{}, err
	}
	as := ws.Skill(name)
	if as == nil {
		return sdk.Result{}, skillNotActive(ws, name)
	}
	if err := disclosure.Check(as.Entry.Canonical, Triggers(as.Manifest), disclosure.Model); err != nil {
		if errors.Is(err, disclosure.ErrModelInvocationDisabled) {
			return sdk.Result{}, sdk.Errorf(CodeModelInvocationRefused, "%v", err)
		}
		return sdk.Result{}, sdk.Errorf(sdk.CodeToolFailed, "%v", err)
	}
	r, err := ws.instructions(as, args)
	if err != nil {
		return sdk.Result{}, err
	}
	r, note := r.withoutArguments()
	value, err := json.Marshal(r)
	if err != nil {
		return sdk.Result{}, sdk.Errorf(sdk.CodeToolFailed, "encode the instructions of %s: %v", r.Skill, err)
	}
	msg := strings.TrimSpace(note + "\n" + r.ForkNote())
	return sdk.Result{Value: value, Message: msg}, nil
}

func orEmptyObject(raw json.RawMessage) []byte {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}")
	}
	return raw
}

// decodeSkillArgs takes a list of strings, or one string split on white
// space (how a slash command's text becomes $0, $1, ...).
func decodeSkillArgs(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.Fields(s), nil
	}
	return nil, sdk.Errorf(sdk.CodeInvalidArgs, "args must be a list of strings or a string, got %s", FirstLine(string(raw), 80))
}

func skillNotActive(ws *Workspace, name string) *sdk.Error {
	if fe := ws.failedError(name); fe != nil {
		return fe
	}
	var active []string
	for _, as := range ws.Active {
		if !as.Manifest.DisableModelInvocation {
			active = append(active, as.Entry.Canonical)
		}
	}
	list := "none"
	if len(active) > 0 {
		list = strings.Join(active, ", ")
	}
	for _, e := range ws.All {
		if e.Canonical == canonicalOrSelf(name) {
			return sdk.Errorf(CodeSkillNotFound, "skill %s is installed but not active in this process (active skills: %s); a person can enable it with AGENT_SKILLS (see 'agent check')", e.Canonical, list)
		}
	}
	return sdk.Errorf(CodeSkillNotFound, "no skill named %q (active skills: %s)", name, list)
}

func canonicalOrSelf(name string) string {
	if c, err := manifest.Canonical(name); err == nil {
		return c
	}
	return name
}

// Instructions is Layer 2 of an active skill for a front end that shows it
// itself (an MCP prompt, a /name invocation): the first-use check, then the
// SKILL.md body with args substituted.
func (ws *Workspace) Instructions(skill string, args []string) (Instructions, error) {
	as := ws.Skill(skill)
	if as == nil {
		return Instructions{}, skillNotActive(ws, skill)
	}
	return ws.instructions(as, args)
}

func (ws *Workspace) instructions(as *ActiveSkill, args []string) (Instructions, error) {
	if err := ws.checkSkill(as, false); err != nil {
		return Instructions{}, err
	}
	m := as.Manifest
	if as.Indexed {
		// The listing has no body: read SKILL.md now, which also refuses
		// one changed since install.
		full, _, err := LoadManifest(*as.Entry)
		if err != nil {
			return Instructions{}, sdk.Errorf(sdk.CodeToolFailed, "load skill %s: %v", as.Entry.Canonical, err)
		}
		m = full
	}
	return Layer2(*as.Entry, m, args), nil
}
