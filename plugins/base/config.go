package base

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentskills/agent/sdk"
)

// ConfigEnv is the environment variable that carries Config as JSON to
// `agent __plugin base`.
const ConfigEnv = "AGENT_BASE_CONFIG"

// Limits of SPEC §14.
const (
	DefaultTimeout   = 60 * time.Second
	MaxTimeout       = 10 * time.Minute
	DefaultMaxOutput = 1 << 20
	DefaultReadLimit = 2000
	MaxImageBytes    = 15 << 20
	MaxPDFBytes      = 30 << 20
	maxLineBytes     = 2000      // one line of read_file
	maxReadBytes     = 256 << 10 // one read_file answer
	maxEditBytes     = 32 << 20  // files edit_file, apply_patch and grep_files read whole
)

// Config is everything the plugin process needs. Zero values take the SPEC
// defaults.
type Config struct {
	// Root is the workspace folder (AGENT_WORKSPACE, else the current
	// folder of the agent). Every file tool is confined beneath it.
	Root string `json:"root"`
	// Home is AGENT_HOME. Paths inside it are refused even when the
	// workspace holds it.
	Home string `json:"home,omitempty"`
	// Environ is what exec and shell_command pass to commands (plus the
	// call's env). It never travels in ConfigEnv: the host starts the
	// plugin with its environment less secrets (SPEC §12), and Main takes
	// it from there less the plugin's own variables. nil means that.
	Environ []string `json:"-"`
	// Timeout is the default command timeout (60 s).
	Timeout time.Duration `json:"timeout,omitempty"`
	// MaxOutput is the bytes of command output kept, middle-out (1 MiB).
	MaxOutput int `json:"max_output,omitempty"`
	// Network is what exec and shell_command may reach: none (a network
	// namespace of their own) unless it holds "*".
	Network []string `json:"network,omitempty"`
	// NoSandbox runs commands unconfined: only the benchmarks that
	// compare the sandbox's cost set it.
	NoSandbox bool `json:"no_sandbox,omitempty"`
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	return c
}

// pluginVars are the variables the host and go-plugin give the plugin
// process itself; commands do not get them.
var pluginVars = []string{ConfigEnv, sdk.Handshake.MagicCookieKey, sdk.EnvLogLevel,
	"PLUGIN_MIN_PORT", "PLUGIN_MAX_PORT", "PLUGIN_PROTOCOL_VERSIONS", "PLUGIN_UNIX_SOCKET_DIR", "PLUGIN_CLIENT_CERT"}

// commandEnviron is environ less pluginVars.
func commandEnviron(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if k, _, ok := strings.Cut(kv, "="); ok && k != "" && !slices.Contains(pluginVars, k) {
			out = append(out, kv)
		}
	}
	return out
}

func configFromEnv() (Config, error) {
	var cfg Config
	raw, ok := os.LookupEnv(ConfigEnv)
	if !ok {
		return cfg, fmt.Errorf("%s is not set; this command is started by agent, not by hand", ConfigEnv)
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return cfg, fmt.Errorf("%s is not valid JSON: %v", ConfigEnv, err)
	}
	if cfg.Root == "" {
		return cfg, fmt.Errorf("%s names no workspace root", ConfigEnv)
	}
	return cfg, nil
}
