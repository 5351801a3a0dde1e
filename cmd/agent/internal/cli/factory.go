package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/viper"

	"github.com/agentskills/agent/internal/app/bundled"
	"github.com/agentskills/agent/internal/app/install"
	"github.com/agentskills/agent/internal/app/workspace"
	scripts "github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/signing"
	"github.com/agentskills/agent/registry/trust"
)

// Config is the resolved configuration: $AGENT_HOME/config.yaml, then
// environment variables, then flags (SPEC §6).
type Config struct {
	Home            string        // AGENT_HOME
	Skills          string        // AGENT_SKILLS, falling back to skills.enabled in config.yaml
	ScriptTimeout   time.Duration // AGENT_SCRIPT_TIMEOUT, seconds
	MaxScriptOutput int64         // AGENT_MAX_SCRIPT_OUTPUT, bytes
	UV              string        // AGENT_UV
	LogLevel        string        // AGENT_LOG_LEVEL
	// agent run (SPEC §16): model:, instruction: and approve: in config.yaml.
	Model       string
	Instruction string
	Approve     string
	// PassEnv (pass_env in config.yaml, AGENT_PASS_ENV comma-separated)
	// names secrets skills' code may get all the same (SPEC §12).
	PassEnv []string
	// Mirrors is mirrors: in config.yaml (SPEC §18).
	Mirrors []registry.Mirror
	// Signatures is signatures: in config.yaml (SPEC §18): whether every
	// source must be signed, and the accepted signers (with those
	// `agent skill trust --signer` recorded in $AGENT_HOME/signers.json).
	Signatures SignaturesConfig
	// Sources and Indexes are sources: and indexes: in config.yaml (SPEC
	// §20): what agent skill search and agent catalog serve look through.
	Sources []string
	Indexes []string
	// Limits are max_file_size and max_skill_size (AGENT_MAX_FILE_SIZE,
	// AGENT_MAX_SKILL_SIZE), bytes: what add, update and sync write.
	Limits gitsrc.Limits
	// PluginCache is plugin_cache (AGENT_PLUGIN_CACHE): the folder of
	// built plugins that every AGENT_HOME of this user shares, by default
	// agent/plugins in the user's cache folder; "off" builds every time.
	PluginCache string
	// Audit is audit: in config.yaml (agent skill audit).
	Audit AuditConfig
}

// SignaturesConfig is signatures: in config.yaml.
type SignaturesConfig struct {
	Required bool             `mapstructure:"required"`
	Signers  []signing.Signer `mapstructure:"signers"`
}

// Factory hands commands what they need, built lazily so that a command pays
// only for what it uses.
type Factory struct {
	IO *IOStreams

	// LookupEnv, Environ and Executable are seams for tests. Environ is
	// what plugins and scripts get a filtered copy of.
	LookupEnv  func(string) (string, bool)
	Environ    func() []string
	Executable func() (string, error)
	// CallFloor replaces the calls' 5-minute deadline floor
	// (workspace.Config.CallFloor), so that tests take seconds.
	CallFloor time.Duration

	configOnce sync.Once
	config     *Config
	configErr  error
}

// NewFactory returns a Factory wired to the real process.
func NewFactory(ios *IOStreams) *Factory {
	return &Factory{IO: ios, LookupEnv: os.LookupEnv, Environ: os.Environ, Executable: selfExecutable}
}

func (f *Factory) environ() []string {
	if f.Environ == nil {
		return nil
	}
	return f.Environ()
}

// installer returns the Prepare step of add and update.
func (f *Factory) installer() (*install.Preparer, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	wc, err := f.WorkspaceConfig()
	if err != nil {
		return nil, err
	}
	workspace, _ := wc.WorkspaceRoot()
	return install.New(install.Options{
		Home: cfg.Home, Environ: f.environ, PassEnv: cfg.PassEnv, Logger: f.logger(cfg),
		Progress: f.IO.ErrOut, Terminal: f.IO.StderrTTY, Workspace: workspace, PluginCache: cfg.PluginCache,
	}), nil
}

// logger is the host's logger: plugin output and host events on stderr at
// AGENT_LOG_LEVEL (default warn).
func (f *Factory) logger(cfg *Config) hclog.Logger {
	level := hclog.LevelFromString(cfg.LogLevel)
	debugging := level != hclog.NoLevel && level <= hclog.Debug
	return hclog.New(&hclog.LoggerOptions{
		Name:   "agent",
		Level:  level,
		Output: f.IO.ErrOut,
		// go-plugin reports a plugin the host killed on purpose (a call
		// past its deadline) as "[ERROR] plugin process exited ...
		// signal: killed"; the call's result already says so. Shown only
		// when debugging.
		Exclude: func(_ hclog.Level, msg string, args ...any) bool {
			return !debugging && killedPluginExit(msg, args)
		},
	})
}

func killedPluginExit(msg string, args []any) bool {
	if msg != "plugin process exited" {
		return false
	}
	for _, a := range args {
		if err, ok := a.(error); ok && strings.Contains(err.Error(), "signal: killed") {
			return true
		}
		if s, ok := a.(string); ok && strings.Contains(s, "signal: killed") {
			return true
		}
	}
	return false
}

// WorkspaceConfig is what the workspace needs of the configuration.
func (f *Factory) WorkspaceConfig() (workspace.Config, error) {
	cfg, err := f.Config()
	if err != nil {
		return workspace.Config{}, err
	}
	return workspace.Config{
		Home:            cfg.Home,
		Skills:          cfg.Skills,
		Discovery:       f.discovery(),
		ScriptTimeout:   cfg.ScriptTimeout,
		MaxScriptOutput: cfg.MaxScriptOutput,
		UV:              cfg.UV,
		Root:            f.getenv("AGENT_WORKSPACE"),
		AgentVersion:    Version,
		Environ:         f.environ(),
		PassEnv:         cfg.PassEnv,
		Executable:      f.Executable,
		Logger:          f.logger(cfg),
		Relink:          f.relink,
		CallFloor:       f.CallFloor,
	}, nil
}

// loadWorkspace builds the workspace of this process (no process starts).
func (f *Factory) loadWorkspace(ctx context.Context) (*workspace.Workspace, error) {
	wc, err := f.WorkspaceConfig()
	if err != nil {
		return nil, err
	}
	return workspace.Load(ctx, wc)
}

// loadSkillView reads every known skill's SKILL.md: what check reports.
func (f *Factory) loadSkillView(ctx context.Context) (*workspace.View, error) {
	return f.view(ctx, workspace.Every)
}

// loadRecordedWorkspace is the workspace with linked skills as recorded:
// what Layer 1 needs, without rebuilding a linked skill's plugin.
func (f *Factory) loadRecordedWorkspace(ctx context.Context) (*workspace.Workspace, error) {
	wc, err := f.WorkspaceConfig()
	if err != nil {
		return nil, err
	}
	wc.Relink = nil
	return workspace.Load(ctx, wc)
}

func (f *Factory) view(ctx context.Context, scope workspace.Scope) (*workspace.View, error) {
	wc, err := f.WorkspaceConfig()
	if err != nil {
		return nil, err
	}
	return workspace.LoadView(ctx, &wc, scope)
}

// Config loads configuration once per process.
// findUV locates uv as the exec plugin will (AGENT_UV, then PATH).
func (f *Factory) findUV() (string, string) {
	cfg, err := f.Config()
	if err != nil {
		return "", ""
	}
	return scripts.FindUV(cfg.UV)
}

func (f *Factory) Config() (*Config, error) {
	f.configOnce.Do(func() { f.config, f.configErr = f.loadConfig() })
	return f.config, f.configErr
}

// Store opens the registry under AGENT_HOME.
func (f *Factory) Store() (*registry.Store, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	s := registry.NewStore(cfg.Home)
	// Fetch fallbacks (a full history instead of one commit) show at debug.
	s.Git = &gitsrc.GoGit{Debug: f.logger(cfg).Debug}
	s.Mirrors = cfg.Mirrors
	s.Limits = cfg.Limits
	s.Reserved = bundled.Has
	recorded, err := trust.Of(s).Signers()
	if err != nil {
		return nil, err
	}
	if cfg.Signatures.Required || len(cfg.Signatures.Signers) > 0 || len(recorded) > 0 {
		p, err := signing.NewPolicy(cfg.Signatures.Required, append(slices.Clip(cfg.Signatures.Signers), recorded...), cfg.Home)
		if err != nil {
			return nil, fmt.Errorf("read the signer policy (signatures: in %s, and %s): %w", filepath.Join(cfg.Home, "config.yaml"), trust.Of(s).SignersPath(), err)
		}
		s.Signatures = p
	}
	return s, nil
}

func (f *Factory) loadConfig() (*Config, error) {
	home := f.getenv("AGENT_HOME")
	if home == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("find home directory: %w (set AGENT_HOME)", err)
		}
		home = filepath.Join(userHome, ".agent")
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return nil, fmt.Errorf("resolve AGENT_HOME: %w", err)
	}

	v := viper.New()
	v.SetDefault("script_timeout", 60)
	v.SetDefault("max_script_output", 1<<20)
	v.SetDefault("log_level", "warn")
	v.SetDefault("max_file_size", gitsrc.DefaultFileLimit)
	v.SetDefault("max_skill_size", gitsrc.DefaultSkillLimit)
	path := filepath.Join(home, "config.yaml")
	if _, statErr := os.Stat(path); statErr == nil {
		v.SetConfigFile(path)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("read %s: %w (fix the YAML or remove the file)", path, err)
		}
	}
	// Environment variables override the file. Read through LookupEnv so
	// tests can inject them.
	for key, env := range map[string]string{
		"script_timeout":    "AGENT_SCRIPT_TIMEOUT",
		"max_script_output": "AGENT_MAX_SCRIPT_OUTPUT",
		"uv":                "AGENT_UV",
		"log_level":         "AGENT_LOG_LEVEL",
		"max_file_size":     "AGENT_MAX_FILE_SIZE",
		"max_skill_size":    "AGENT_MAX_SKILL_SIZE",
		"plugin_cache":      "AGENT_PLUGIN_CACHE",
	} {
		if val := f.getenv(env); val != "" {
			v.Set(key, val)
		}
	}

	cfg := &Config{Home: home, UV: v.GetString("uv"), LogLevel: strings.ToLower(v.GetString("log_level")),
		Model: v.GetString("model"), Instruction: v.GetString("instruction"), Approve: v.GetString("approve")}
	cfg.PassEnv = v.GetStringSlice("pass_env")
	if s := f.getenv("AGENT_PASS_ENV"); s != "" {
		cfg.PassEnv = nil
		for n := range strings.SplitSeq(s, ",") {
			if n = strings.TrimSpace(n); n != "" {
				cfg.PassEnv = append(cfg.PassEnv, n)
			}
		}
	}
	// AGENT_SKILLS="" means "no skills" and must not fall back to config.yaml.
	if s, ok := f.LookupEnv("AGENT_SKILLS"); ok {
		cfg.Skills = s
	} else {
		cfg.Skills = v.GetString("skills.enabled")
	}
	secs := v.GetFloat64("script_timeout")
	if secs <= 0 {
		return nil, fmt.Errorf("AGENT_SCRIPT_TIMEOUT must be a positive number of seconds, got %q", v.GetString("script_timeout"))
	}
	cfg.ScriptTimeout = time.Duration(secs * float64(time.Second))
	if err := v.UnmarshalKey("mirrors", &cfg.Mirrors); err != nil {
		return nil, fmt.Errorf("read mirrors: in %s: %w (a list of {source: GIT_URL_PREFIX, oci: oci://HOST/PREFIX})", path, err)
	}
	for _, m := range cfg.Mirrors {
		if err := m.Check(); err != nil {
			return nil, fmt.Errorf("read mirrors: in %s: %w", path, err)
		}
	}
	if err := v.UnmarshalKey("signatures", &cfg.Signatures); err != nil {
		return nil, fmt.Errorf("read signatures: in %s: %w (required: true|false, signers: a list of {key: PUBLIC_KEY_OR_FILE, sources: [URL_PREFIX...]})", path, err)
	}
	if err := readAuditConfig(v, cfg, path); err != nil {
		return nil, err
	}
	cfg.Sources, cfg.Indexes = v.GetStringSlice("sources"), v.GetStringSlice("indexes")
	cfg.Limits = gitsrc.Limits{File: v.GetInt64("max_file_size"), Skill: v.GetInt64("max_skill_size")}
	if cfg.Limits.File <= 0 || cfg.Limits.Skill <= 0 {
		return nil, fmt.Errorf("AGENT_MAX_FILE_SIZE and AGENT_MAX_SKILL_SIZE (max_file_size, max_skill_size) must be positive numbers of bytes, got %q and %q", v.GetString("max_file_size"), v.GetString("max_skill_size"))
	}
	switch cfg.PluginCache = v.GetString("plugin_cache"); cfg.PluginCache {
	case "off":
		cfg.PluginCache = ""
	case "":
		if dir, err := os.UserCacheDir(); err == nil {
			cfg.PluginCache = filepath.Join(dir, "agent", "plugins")
		}
	default:
		if cfg.PluginCache, err = filepath.Abs(cfg.PluginCache); err != nil {
			return nil, fmt.Errorf("resolve AGENT_PLUGIN_CACHE (plugin_cache): %w", err)
		}
	}
	cfg.MaxScriptOutput = v.GetInt64("max_script_output")
	if cfg.MaxScriptOutput <= 0 {
		return nil, fmt.Errorf("AGENT_MAX_SCRIPT_OUTPUT must be a positive number of bytes, got %q", v.GetString("max_script_output"))
	}
	return cfg, nil
}

func (f *Factory) getenv(key string) string {
	v, _ := f.LookupEnv(key)
	return v
}

// selfExecutable finds the agent binary for re-executing built-in plugins.
// os.Args[0] wins over os.Executable so that a binary reached through a
// symlink named "agent" (as testscript does) is run under that name.
func selfExecutable() (string, error) {
	arg0 := os.Args[0]
	if strings.ContainsRune(arg0, os.PathSeparator) {
		return filepath.Abs(arg0)
	}
	if p, err := exec.LookPath(arg0); err == nil {
		return filepath.Abs(p)
	}
	return os.Executable()
}
