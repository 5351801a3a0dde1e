package workspace

import (
	"encoding/json"

	"github.com/agentskills/agent/sdk"
)

// UseSkillInfo describes the built-in use_skill tool (its handler, useSkill,
// lives in use_skill.go).
var UseSkillInfo = sdk.ToolInfo{
	Name:        UseSkillTool,
	Description: "Load a skill's full instructions (its SKILL.md body) before using it. Call this when a task matches a skill's description.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string","description":"the skill's name"},"args":{"type":"array","items":{"type":"string"},"description":"arguments substituted for $ARGUMENTS, $ARGUMENTS[N] and $N in the instructions (one string split on spaces is accepted too)"}},"required":["skill"]}`),
}

// ScriptToolInfos describes script_list, script_help and script_run in
// process, so that listing tools never starts the exec plugin. They come
// from a table generated from the plugin's Describe (TestScriptToolsTable
// keeps it so), which reflects over the input types at every call.
func ScriptToolInfos() ([]sdk.ToolInfo, error) {
	out := make([]sdk.ToolInfo, len(scriptToolsTable))
	for i, t := range scriptToolsTable {
		out[i] = t.Info()
	}
	return out, nil
}
