package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// Codes a call gets, beyond the tool error codes of the sdk, when the host
// rather than the tool failed.
const (
	CodePluginTampered = "plugin_tampered"
	CodePluginStart    = "plugin_start_failed"
	CodeHostError      = "host_error"
	// CodePluginBuildFailed: a linked skill's plugin no longer compiles.
	CodePluginBuildFailed = "plugin_build_failed"
)

// ErrPluginBuild marks a Config.Relink error from a plugin that did not
// compile (BuildFailed), since this package does not import the builder.
var ErrPluginBuild = errors.New("plugin build failed")

type buildError struct{ err error }

func (e *buildError) Error() string   { return e.err.Error() }
func (e *buildError) Unwrap() []error { return []error{ErrPluginBuild, e.err} }

// BuildFailed marks err, a failed plugin build, as ErrPluginBuild with its
// message unchanged.
func BuildFailed(err error) error { return &buildError{err: err} }

// Sentinel errors of tool resolution (see Workspace.Resolve).
var (
	ErrUnknownTool   = errors.New("unknown tool")
	ErrToolNotActive = errors.New("tool not active")
)

// The host's sentinels, under this package's names, so that a front end
// can give its advice on an Outcome.Err without importing host.
var (
	ErrPluginTampered = host.ErrTampered
	ErrPluginStart    = host.ErrStart
	ErrUnknownPlugin  = host.ErrUnknownPlugin
)

// StartAdvice is what to do when a plugin would not start; <name> stands
// for the skill.
const StartAdvice = "run with AGENT_LOG_LEVEL=debug to see the plugin's output; if its binary is missing or broken, reinstall the skill with 'agent skill remove <name> --yes' and 'agent skill add'"

// Failure maps an invoke error to a code and a message that says what to
// do next. CodeHostError carries the bare error text: a front end may add
// its own advice.
func Failure(ctx context.Context, t *ToolRef, err error) (code, msg string) {
	var se *sdk.Error
	switch {
	case errors.As(err, &se):
		return se.Code, se.Message
	case errors.Is(err, host.ErrTampered):
		return CodePluginTampered, fmt.Sprintf("%v; the plugin binary of %s changed after it was installed and was not run. Reinstall the skill: 'agent skill remove %s --yes', then 'agent skill add' it again", err, t.Skill, t.Skill)
	case errors.Is(err, host.ErrStart):
		return CodePluginStart, fmt.Sprintf("%v; %s", err, strings.ReplaceAll(StartAdvice, "<name>", t.Skill))
	case ctx.Err() != nil:
		return sdk.CodeCanceled, err.Error()
	}
	return CodeHostError, err.Error()
}

// kindError is an error whose message is complete by itself but that still
// matches a sentinel with errors.Is.
type kindError struct {
	msg  string
	kind error
}

var _ error = (*kindError)(nil)

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// unresolvedFailed is the coded failure (failedError) of the skill a
// tool that did not resolve belongs to: the named skill, any for a tool
// of every skill's (the script tools, use_skill), or the skill whose
// recorded tools hold it.
func (ws *Workspace) unresolvedFailed(bare, wantSkill string) *sdk.Error {
	if wantSkill != "" {
		return ws.failedError(wantSkill)
	}
	switch bare {
	case "script_list", "script_help", "script_run", UseSkillTool:
		return ws.failedCoded()
	}
	for _, e := range ws.All {
		fe := ws.failedError(e.Canonical)
		if fe == nil {
			continue
		}
		for _, t := range e.Tools {
			if t.Name == bare {
				return fe
			}
		}
	}
	return nil
}

// unresolved explains why a tool name did not resolve: which installed
// skill has it and how to activate that skill. It matches ErrToolNotActive
// or ErrUnknownTool, or is an *sdk.Error for an untrusted skill.
func (ws *Workspace) unresolved(name string) error {
	bare, wantSkill := name, ""
	if skill, tool, ok := strings.Cut(name, "."); ok {
		bare = tool
		if c, err := manifest.Canonical(skill); err == nil {
			wantSkill = c
		}
	}
	if fe := ws.unresolvedFailed(bare, wantSkill); fe != nil {
		return fe
	}
	// An active skill that is untrusted has no runnable tools: say so, with
	// the fix, rather than that the tool does not exist.
	if as := ws.Skill(wantSkill); wantSkill != "" && as != nil && !runsCode(as.Entry) {
		return untrustedError(as.Entry)
	}
	for i := range ws.All {
		e := &ws.All[i]
		if wantSkill != "" && e.Canonical == wantSkill && !runsCode(e) && len(e.Tools) == 0 {
			return &kindError{msg: fmt.Sprintf("tool %s is not active: skill %s (untrusted) was installed as files only, so its plugin is not built and its tools are not known yet; "+
				"'agent skill trust %s' builds it and describes its tools, then export AGENT_SKILLS=%s", name, e.Canonical, e.Canonical, e.Canonical), kind: ErrToolNotActive}
		}
	}
	if bare == "script_list" || bare == "script_help" || bare == "script_run" {
		for _, as := range ws.Active {
			if as.Scripts > 0 && !runsCode(as.Entry) {
				return untrustedError(as.Entry)
			}
		}
	}
	var owners []registry.Entry
	for _, e := range ws.All {
		if ws.Skill(e.Canonical) != nil || (wantSkill != "" && e.Canonical != wantSkill) {
			continue
		}
		for _, t := range e.Tools {
			if t.Name == bare {
				owners = append(owners, e)
				break
			}
		}
	}
	if len(owners) == 0 && (bare == "script_list" || bare == "script_help" || bare == "script_run") {
		owners = ws.inactiveWithScripts()
		if len(owners) == 0 {
			return &kindError{msg: fmt.Sprintf("%s: no installed skill has scripts; 'agent skill list' shows what is installed", name), kind: ErrUnknownTool}
		}
	}
	if len(owners) == 0 {
		hint := ""
		if s := ws.suggestTool(name); s != "" {
			hint = fmt.Sprintf("; did you mean %s?", s)
		}
		return &kindError{msg: fmt.Sprintf("%s is not a tool of any active or installed skill%s; 'agent tools' lists the active ones", name, hint), kind: ErrUnknownTool}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tool %s is not active;", name)
	for _, e := range owners {
		if f, failed := ws.failure(e.Canonical); failed {
			// Selected already: the advice to export AGENT_SKILLS would be
			// wrong. What is wrong is the skill itself.
			fmt.Fprintf(&b, " skill %s provides it but failed to load: %s (the warning above says more; fix it, then call again).", e.Canonical, f.Reason)
			continue
		}
		if e.NamedOnly {
			fmt.Fprintf(&b, " skill %s provides it: export AGENT_SKILLS=%s (AGENT_SKILLS=all leaves it out: it must be named).", e.Canonical, e.Canonical)
		} else if e.Trusted {
			fmt.Fprintf(&b, " skill %s provides it: export AGENT_SKILLS=%s (or AGENT_SKILLS=all).", e.Canonical, e.Canonical)
		} else {
			fmt.Fprintf(&b, " skill %s (untrusted) provides it: 'agent skill trust %s' and export AGENT_SKILLS=%s, or export AGENT_SKILLS=all-untrusted.", e.Canonical, e.Canonical, e.Canonical)
		}
	}
	return &kindError{msg: strings.TrimSuffix(b.String(), "."), kind: ErrToolNotActive}
}

// suggestTool is the active or installed tool closest to name, in the form
// name was given (bare or skill.tool).
func (ws *Workspace) suggestTool(name string) string {
	var names []string
	qualified := strings.Contains(name, ".")
	for _, t := range ws.Tools {
		if qualified {
			names = append(names, t.Skill+"."+t.Name)
		} else {
			names = append(names, t.Name)
		}
	}
	for _, e := range ws.All {
		for _, t := range e.Tools {
			if qualified {
				names = append(names, e.Canonical+"."+t.Name)
			} else {
				names = append(names, t.Name)
			}
		}
	}
	return manifest.Suggest(name, names)
}

// inactiveWithScripts lists installed skills that are not active and have
// scripts, to say which one to activate for the script tools.
func (ws *Workspace) inactiveWithScripts() []registry.Entry {
	var out []registry.Entry
	for _, e := range ws.All {
		if ws.Skill(e.Canonical) != nil || e.Path == "" || !DirExists(e.Path) {
			continue
		}
		m, _, err := LoadManifest(e)
		if err != nil {
			continue
		}
		if scripts, err := exec.List(e.Path, m.Scripts, m.ScriptsIgnore); err == nil && len(scripts) > 0 {
			out = append(out, e)
		}
	}
	return out
}
