package workspace

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/ground/envfilter"
	"github.com/agentskills/agent/plugins/base"
	"github.com/agentskills/agent/registry"
)

// BaseSkill is the bundled base skill (SPEC §14). Its plugin is the agent
// binary itself, `agent __plugin base`, registered under the skill's name.
const BaseSkill = "base"

// isBundledBase reports whether e is the bundled base skill (no other
// skill takes its name, AllEntries).
func isBundledBase(e *registry.Entry) bool {
	return e.Canonical == BaseSkill && e.Source == registry.SourceBundled
}

// withBuiltinTools gives the bundled base skill its tools, from the
// generated table, so that listing them starts nothing.
func withBuiltinTools(e registry.Entry) registry.Entry {
	if isBundledBase(&e) {
		e.Tools = baseTools()
	}
	return e
}

// baseTools are the base plugin's tools as its Describe returns them,
// generated (basetools_table.go): describing them in process built their
// schemas by reflection on every listing.
func baseTools() []registry.Tool { return baseToolsTable }

// WorkspaceRoot is the folder the base tools work in: Config.Root
// (AGENT_WORKSPACE), else the current folder.
func (c *Config) WorkspaceRoot() (string, error) {
	if c.Root != "" {
		return filepath.Abs(c.Root)
	}
	return os.Getwd()
}

// basePlugin describes `agent __plugin base` when the bundled base skill
// is active. Its commands get the host's environment less secrets (SPEC
// §12, §14), so the plugin process gets just that, and its configuration
// holds only its settings.
func (ws *Workspace) basePlugin() (host.Plugin, bool, error) {
	as := ws.Skill(BaseSkill)
	if as == nil || !isBundledBase(as.Entry) {
		return host.Plugin{}, false, nil
	}
	self, err := ws.Config.executable()
	if err != nil {
		return host.Plugin{}, false, fmt.Errorf("find the agent binary to serve the base tools: %w", err)
	}
	root, err := ws.Config.WorkspaceRoot()
	if err != nil {
		return host.Plugin{}, false, fmt.Errorf("find the workspace folder: %w (set AGENT_WORKSPACE)", err)
	}
	data, err := json.Marshal(base.Config{Root: root, Home: ws.Config.Home})
	if err != nil {
		return host.Plugin{}, false, fmt.Errorf("encode the base plugin's configuration: %w", err)
	}
	return host.Plugin{
		Name: BaseSkill,
		Path: self,
		Args: []string{"__plugin", "base"},
		Env:  append(envfilter.Policy{All: true, Pass: ws.Config.PassEnv}.Filter(ws.Config.Environ), base.ConfigEnv+"="+string(data)),
		Dir:  root,
	}, true, nil
}
