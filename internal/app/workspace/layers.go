package workspace

import (
	"fmt"

	"github.com/agentskills/agent/internal/disclosure"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

// Layer1 is the Layer 1 text of the active skills within budget
// characters (SPEC §10), and which skills it includes and drops. It is the
// only Layer 1: `agent prompt`, the MCP instructions and `agent run`'s
// system prompt all come from here. It reads nothing.
func (ws *Workspace) Layer1(budget int) (text string, included, dropped []string, err error) {
	skills := make([]disclosure.Skill, 0, len(ws.Active))
	scripts := false
	for _, as := range ws.Active {
		desc := as.Manifest.Description
		if !runsCode(as.Entry) {
			// The model must not plan on running what will be refused.
			desc = UntrustedNote + desc
		}
		skills = append(skills, disclosure.Skill{
			Name:                   as.Entry.Canonical,
			Description:            desc,
			DisableModelInvocation: as.Manifest.DisableModelInvocation,
		})
		if as.Scripts > 0 && !as.Manifest.DisableModelInvocation && runsCode(as.Entry) {
			scripts = true
		}
	}
	var tools []disclosure.Tool
	if len(skills) > 0 {
		tools, err = GenericTools(scripts)
		if err != nil {
			return "", nil, nil, err
		}
	}
	text, included, dropped = disclosure.Layer1(skills, tools, budget)
	return text, included, dropped, nil
}

// UntrustedNote starts the Layer 1 description of an active skill that is
// not trusted: its instructions can be read, its code does not run.
const UntrustedNote = "[untrusted: instructions only, its scripts and plugin do not run until a person runs 'agent skill trust'] "

// GenericTools are the descriptions the built-in tools are listed with.
func GenericTools(withScripts bool) ([]disclosure.Tool, error) {
	tools := []disclosure.Tool{{Name: UseSkillInfo.Name, Description: UseSkillInfo.Description}}
	if withScripts {
		infos, err := ScriptToolInfos()
		if err != nil {
			return nil, fmt.Errorf("describe the script tools: %w", err)
		}
		for _, i := range infos {
			tools = append(tools, disclosure.Tool{Name: i.Name, Description: i.Description})
		}
	}
	return tools, nil
}

// Instructions is Layer 2: the use_skill result and `agent skill show
// --json`.
type Instructions struct {
	Skill        string   `json:"skill"`
	Instructions string   `json:"instructions"`
	Arguments    []string `json:"arguments"`
	// Context "fork" asks the caller to run the skill in a sub-agent, with
	// Agent and Model when the skill names them.
	Context      string   `json:"context,omitempty"`
	Agent        string   `json:"agent,omitempty"`
	Model        string   `json:"model,omitempty"`
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// BaseDir is where the skill's references and scripts are (Layer 3),
	// empty for a bundled skill.
	BaseDir string `json:"base_dir,omitempty"`

	body         string // the SKILL.md body before substitution
	argumentHint string
}

// Layer2 renders a skill's instructions for args. It uses the manifest
// already parsed from SKILL.md and reads nothing else.
func Layer2(e registry.Entry, m *manifest.Manifest, args []string) Instructions {
	if args == nil {
		args = []string{}
	}
	// The folder after the arguments: a path holding "$1" stays a path.
	return Instructions{
		Skill:        e.Canonical,
		Instructions: disclosure.SubstituteSkillDir(disclosure.Substitute(m.Body, args), e.Path),
		Arguments:    args,
		Context:      m.Context,
		Agent:        m.Agent,
		Model:        m.Model,
		AllowedTools: m.AllowedTools,
		BaseDir:      e.Path,
		body:         disclosure.SubstituteSkillDir(m.Body, e.Path),
		argumentHint: m.ArgumentHint,
	}
}

// withoutArguments is r for a model that gave no arguments to a skill
// whose body has placeholders: the body as written, since every
// placeholder filled with "" reads as nonsense ("Greet  in the language
// “"), and a note that names the arguments.
func (r Instructions) withoutArguments() (Instructions, string) {
	if len(r.Arguments) > 0 || r.Instructions == r.body {
		return r, ""
	}
	r.Instructions = r.body
	hint := ""
	if r.argumentHint != "" {
		hint = " (" + r.argumentHint + ")"
	}
	return r, fmt.Sprintf("No arguments were given, so the $ARGUMENTS placeholders are left as written: call use_skill again with args%s, or apply the instructions with the values the user gave.", hint)
}

// Triggers are the invocation fields of a manifest, for disclosure.Check.
func Triggers(m *manifest.Manifest) disclosure.Triggers {
	return disclosure.Triggers{DisableModelInvocation: m.DisableModelInvocation, UserInvocable: m.IsUserInvocable()}
}

// ForkNote tells a caller that the skill wants a sub-agent; "" otherwise.
func (r Instructions) ForkNote() string {
	if r.Context != "fork" {
		return ""
	}
	msg := fmt.Sprintf("skill %s asks to run in a forked sub-agent (context: fork)", r.Skill)
	if r.Agent != "" {
		msg += ", agent: " + r.Agent
	}
	if r.Model != "" {
		msg += ", model: " + r.Model
	}
	return msg
}
