package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/sdk"
)

// Codes of a call refused before any of the skill's code runs.
const (
	CodeSkillTampered    = "skill_tampered"
	CodePermissionDenied = "permission_denied"
)

// runsCode reports whether a skill's plugin and scripts may run: an
// untrusted skill is files only (SPEC §6) until 'agent skill trust'.
func runsCode(e *registry.Entry) bool {
	return e.Trusted || e.Source == registry.SourceBundled
}

// untrustedError is the refusal of a call into an untrusted skill's code.
func untrustedError(e *registry.Entry) *sdk.Error {
	canonical := e.Canonical
	if e.Source == registry.SourceDiscovered {
		return sdk.Errorf(CodePermissionDenied, "skill %s (discovered in %s) is not trusted, so its scripts do not run. "+
			"A person who has read it can trust it with 'agent skill trust %s'", canonical, e.Path, canonical)
	}
	return sdk.Errorf(CodePermissionDenied, "skill %s is not trusted, so its scripts and plugin do not run (it was installed as files only). "+
		"A person who has read it can trust it with 'agent skill trust %s'", canonical, canonical)
}

// checkSkill is the first-use check of SPEC §5 before a skill is used: the
// skill must be trusted when code of it is about to run, and its files
// must be as installed. The fingerprint cache in the registry keeps the
// second part to a stat per file. A plugin is checked once per workspace
// (before its launch); scripts and use_skill on every use, since each
// reads the files again.
func (ws *Workspace) checkSkill(as *ActiveSkill, code bool) error {
	if code && !runsCode(as.Entry) {
		return untrustedError(as.Entry)
	}
	if as.Entry.Source == registry.SourceBundled {
		return nil
	}
	err := ws.Config.Store().CheckIntegrity(*as.Entry)
	var te *registry.TamperedError
	if errors.As(err, &te) && as.Entry.Source == registry.SourceDiscovered {
		what := strings.Join(te.Changes.Files(), ", ")
		if what == "" {
			what = "its files hash to " + te.Changes.Got + ", trusted " + te.Changes.Want
		}
		return sdk.Errorf(CodeSkillTampered, "skill %s (discovered in %s) changed since you trusted it: %s; it is not used. Read it again, then 'agent skill trust %s'",
			as.Entry.Canonical, as.Entry.Path, what, as.Entry.Canonical)
	}
	if errors.As(err, &te) {
		return sdk.Errorf(CodeSkillTampered, "%v", err)
	}
	if err != nil {
		return fmt.Errorf("check the files of %s: %w", as.Entry.Canonical, err)
	}
	return nil
}

// scriptSkill is the skill_name a script_run or script_help call names.
type scriptSkill struct {
	SkillName string `json:"skill_name"`
}

// beforeInvoke runs checkSkill for the skill whose code a call is about to
// run: the plugin's own skill, or the skill a script tool names.
func (ws *Workspace) beforeInvoke(ctx context.Context, t *ToolRef, args json.RawMessage) error {
	switch {
	case t.Plugin == ExecPlugin:
		if t.Name != "script_run" && t.Name != "script_help" {
			return nil // script_list lists file names only
		}
		var in scriptSkill
		if json.Unmarshal(args, &in) != nil || in.SkillName == "" {
			return nil // the plugin reports the bad arguments
		}
		as := ws.Skill(in.SkillName)
		if as == nil {
			if fe := ws.failedError(in.SkillName); fe != nil {
				return fe
			}
			return nil // the plugin reports not_found
		}
		return ws.checkSkill(as, true)
	case t.Plugin != "":
		// t.Skill is canonical: a checked plugin needs no skill lookup
		// (which validates the name again) on every call.
		ws.checkMu.Lock()
		done := ws.checked[t.Skill]
		ws.checkMu.Unlock()
		if done {
			return nil
		}
		as := ws.Skill(t.Skill)
		if as == nil {
			return nil
		}
		ws.checkMu.Lock()
		defer ws.checkMu.Unlock()
		if ws.checked[as.Entry.Canonical] {
			return nil
		}
		if err := ws.checkSkill(as, true); err != nil {
			return err
		}
		if ws.checked == nil {
			ws.checked = map[string]bool{}
		}
		ws.checked[as.Entry.Canonical] = true
	}
	return nil
}

// CheckFiles is the first-use check for a front end that reads a skill's
// files itself (an MCP resource read, say): nil when the active skill's
// files are as installed, an *sdk.Error with CodeSkillTampered otherwise.
// Reading files needs no trust, so an untrusted skill passes.
func (ws *Workspace) CheckFiles(skill string) error {
	as := ws.Skill(skill)
	if as == nil {
		return skillNotActive(ws, skill)
	}
	return ws.checkSkill(as, false)
}
