package workspace

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/registry"
)

// Config is what a workspace is built from. A front end resolves it from
// config.yaml, the environment and flags; nothing here reads them.
type Config struct {
	Home   string // AGENT_HOME
	Skills string // AGENT_SKILLS
	// Always names skills active whatever AGENT_SKILLS says, when they
	// are installed or bundled (`agent run` always has base, SPEC §14).
	Always          []string
	ScriptTimeout   time.Duration // limit of one script run
	MaxScriptOutput int64         // bytes kept of a script's output
	UV              string        // uv binary, "" to find it on PATH
	// Discovery is where skills are found besides AGENT_HOME (SPEC §6);
	// the zero value finds none.
	Discovery Discovery
	// Root is the folder the base tools work in (AGENT_WORKSPACE); ""
	// means the current folder.
	Root string
	// AgentVersion is what SKILL.md compatibility fields are checked
	// against.
	AgentVersion string
	// Environ is the environment plugins and scripts get a filtered copy
	// of; nil gives them only what host.FilterEnv always passes.
	Environ []string
	// PassEnv names secrets (SPEC §12) that may reach a skill's code
	// all the same: the config's pass_env. A skill still gets one only
	// when its permissions.env matches it; base commands get them all.
	PassEnv []string
	// Executable finds the agent binary, re-executed as `agent __plugin
	// exec` for the script tools. nil means os.Executable.
	Executable func() (string, error)
	// Logger receives plugin output and host events; nil discards them.
	Logger hclog.Logger
	// Relink brings an active linked (dev) skill up to date with its
	// folder: it rebuilds the plugin and describes it again when the
	// sources changed, and returns the entry to use. nil uses entries as
	// recorded.
	Relink func(ctx context.Context, e registry.Entry) (registry.Entry, error)
	// CallFloor is the least time a call gets before it is canceled
	// (SPEC §2); 0 means DefaultCallFloor. Tests shorten it.
	CallFloor time.Duration
	// Observer hears the start and end of every Call; nil hears nothing.
	// Observers makes one of several.
	Observer CallObserver
	// PluginStarted, when set, is told of every plugin process that
	// started, with restart true when this workspace had started that
	// plugin before (after a crash, a kill at a deadline or an idle stop).
	PluginStarted func(ctx context.Context, skill string, restart bool)
}

// Store opens the registry under Home.
func (c *Config) Store() *registry.Store { return registry.NewStore(c.Home) }

func (c *Config) executable() (string, error) {
	if c.Executable != nil {
		return c.Executable()
	}
	return os.Executable()
}

func (c *Config) logger() hclog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return hclog.NewNullLogger()
}
