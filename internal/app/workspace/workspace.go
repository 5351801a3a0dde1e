package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// Names of the built-in tool providers. Canonical skill names never contain
// '_', so these cannot collide with a skill.
const (
	ExecPlugin   = "__exec"
	BuiltinSkill = "agent" // label of in-process tools such as use_skill
	ExecSkill    = "exec"  // label of the script tools
	UseSkillTool = "use_skill"
)

// Workspace is what one agent process sees: every known skill, the ones
// AGENT_SKILLS activates, and the index of the tools they expose. Building
// it reads files only; plugins start on the first Call.
type Workspace struct {
	Config Config
	// All holds installed, bundled and discovered skills, sorted by
	// canonical name; a bundled skill keeps its name (AllEntries).
	All []registry.Entry
	// Active are the skills AGENT_SKILLS selects and that loaded.
	Active []*ActiveSkill
	// Failed are selected skills that could not be loaded, with the reason.
	Failed []LoadFailure
	// Warnings are activation and tool-collision warnings, for stderr.
	Warnings []string
	// Tools is the tool index in the order shown to a model.
	Tools []*ToolRef

	byName      map[string]*ToolRef
	namesOnce   sync.Once
	byQualified map[string]*ToolRef // names
	byExposed   map[string]*ToolRef // names

	hostOnce sync.Once
	host     *host.Host
	hostErr  error
	// plugins are the definitions registered with host, with their use,
	// so that StopIdle can stop a plugin nobody is calling.
	plugins map[string]*pluginUse

	checkMu sync.Mutex
	checked map[string]bool // plugins whose skill passed checkSkill
}

// ActiveSkill is one loaded, active skill.
type ActiveSkill struct {
	Entry    *registry.Entry
	Manifest *manifest.Manifest
	Scripts  int // how many runnable scripts (those without Err) it has
	// Indexed: Manifest came from the registry (no Body); Layer 2 reads
	// SKILL.md when the skill is used.
	Indexed bool
}

// LoadFailure says why a selected skill was left out.
type LoadFailure struct {
	Name      string
	Canonical string
	Reason    string // one line
	Code      string // SkillState.Code
	Output    string // SkillState.Output
}

// ToolRef is one tool in the index.
type ToolRef struct {
	Name   string // the name it is called by
	Skill  string // canonical skill name, or "agent"/"exec" for built-ins
	Plugin string // host plugin that serves it; "" for in-process tools
	Info   sdk.ToolInfo
	// Shadowed is set when an earlier tool took the bare name; the tool is
	// still reachable as Skill.Name.
	Shadowed bool

	handler func(ctx context.Context, ws *Workspace, args json.RawMessage) (sdk.Result, error)
}

// Qualified is the skill.tool form that always selects exactly this tool.
func (t *ToolRef) Qualified() string { return t.Skill + "." + t.Name }

// Load builds the workspace for this process. It never starts a process:
// tools come from the registry's cache and the script tools are described
// in process. Which skills are active is decided once, by LoadView, so that
// every command and front end agrees.
func Load(ctx context.Context, cfg Config) (*Workspace, error) {
	v, err := LoadView(ctx, &cfg, Selected)
	if err != nil {
		return nil, err
	}
	// v.all is this view's own copy of the entries: no second one.
	ws := &Workspace{Config: cfg, Warnings: v.Warnings, All: v.all}
	actives := make([]ActiveSkill, 0, len(v.Skills)) // one allocation for all
	for _, st := range v.Skills {
		e := st.Entry
		if st.Selected && !st.Active {
			ws.fail(e, st.Detail, st.Output)
			ws.Failed[len(ws.Failed)-1].Code = st.Code
		}
		if !st.Active {
			continue
		}
		actives = append(actives, ActiveSkill{Entry: e, Manifest: st.Manifest, Indexed: st.Indexed})
		as := &actives[len(actives)-1]
		if st.Indexed && e.Listing != nil {
			// Recorded at install: the folder is not read (SPEC §5).
			as.Scripts = len(e.Listing.Runnable)
		} else if e.Path != "" && DirExists(e.Path) {
			// List, not Discover: no script source is read until a script
			// tool asks for it (SPEC §10, Layer 3).
			scripts, err := exec.List(e.Path, st.Manifest.Scripts, st.Manifest.ScriptsIgnore)
			if err != nil {
				ws.fail(e, shortReason(err), "")
				continue
			}
			for _, s := range scripts {
				if s.Err != nil {
					ws.Warnings = append(ws.Warnings, fmt.Sprintf("skill %s: script %s is skipped: %v", e.Canonical, s.Name, s.Err))
					continue
				}
				as.Scripts++
			}
		}
		if e.Source == registry.SourceDiscovered && st.Manifest.Plugin != nil {
			ws.Warnings = append(ws.Warnings, fmt.Sprintf("skill %s (discovered in %s) has a Go plugin, which is built only for an installed or linked skill: 'agent skill link %s' builds it and serves its tools", e.Canonical, e.Path, e.Path))
		}
		if e.Plugin != nil && len(e.Tools) == 0 {
			ws.Warnings = append(ws.Warnings, fmt.Sprintf("skill %s: its plugin described no tools at install; if that is wrong, remove it ('agent skill remove %s --yes') and add it again", e.Canonical, e.Canonical))
		}
		ws.Active = append(ws.Active, as)
	}
	if err := ws.index(); err != nil {
		return nil, err
	}
	return ws, nil
}

// New builds a workspace from skills a caller already loaded, for tests and
// callers that decide activation themselves. It starts no process.
func New(cfg Config, all []registry.Entry, active []*ActiveSkill) (*Workspace, error) {
	ws := &Workspace{Config: cfg, All: all, Active: active}
	if err := ws.index(); err != nil {
		return nil, err
	}
	return ws, nil
}

// fail records a selected skill that did not load; output (such as go
// build's) follows the reason in the warning, so that the user sees what
// to fix without another command.
func (ws *Workspace) fail(e *registry.Entry, reason, output string) {
	ws.Failed = append(ws.Failed, LoadFailure{Name: e.Name, Canonical: e.Canonical, Reason: reason, Output: output})
	msg := fmt.Sprintf("skill %s failed to load: %s", e.Name, reason)
	if output != "" {
		msg += "\n" + output
	}
	ws.Warnings = append(ws.Warnings, msg)
}

// failure is the load failure of the skill with this canonical name.
func (ws *Workspace) failure(canonical string) (LoadFailure, bool) {
	for _, f := range ws.Failed {
		if f.Canonical == canonical {
			return f, true
		}
	}
	return LoadFailure{}, false
}

// failedError is the error of a call into a selected skill that did not
// load for a reason with a code of its own (a SKILL.md changed after
// install, a linked plugin that no longer compiles): that code on every
// use, with the reason and the start of any build output, rather than
// unknown_tool or "not active". nil for any other skill.
func (ws *Workspace) failedError(skill string) *sdk.Error {
	canon, err := manifest.Canonical(skill)
	if err != nil {
		return nil
	}
	f, ok := ws.failure(canon)
	if !ok || f.Code == "" {
		return nil
	}
	msg := fmt.Sprintf("skill %s is not used: %s", f.Canonical, f.Reason)
	if f.Output != "" {
		lines := strings.Split(f.Output, "\n")
		if len(lines) > 5 {
			lines = append(lines[:5], "...")
		}
		msg += "\n" + strings.Join(lines, "\n")
	}
	return sdk.Errorf(f.Code, "%s", msg)
}

// failedCoded is the first selected skill that failed with a code, for a
// call that names no skill (script_list).
func (ws *Workspace) failedCoded() *sdk.Error {
	for _, f := range ws.Failed {
		if f.Code != "" {
			return ws.failedError(f.Canonical)
		}
	}
	return nil
}

// shortReason is the first line of an error, enough to say why a skill did
// not load without burying the other output.
func shortReason(err error) string {
	return FirstLine(err.Error(), 200)
}

// PrintWarnings writes the workspace's warnings to w.
func (ws *Workspace) PrintWarnings(w io.Writer) {
	for _, msg := range ws.Warnings {
		fmt.Fprintf(w, "warning: %s\n", msg)
	}
}

// index builds the tool index. Built-in tools come first so that a skill
// cannot hide use_skill or the script tools; skill tools follow in canonical
// order, and the first to take a bare name keeps it.
func (ws *Workspace) index() error {
	if len(ws.Active) == 0 {
		ws.byName = map[string]*ToolRef{}
		return nil
	}
	var scriptInfos []sdk.ToolInfo
	if ws.hasScripts() {
		infos, err := ScriptToolInfos()
		if err != nil {
			return fmt.Errorf("describe the script tools: %w", err)
		}
		scriptInfos = infos
	}
	n := 1 + len(scriptInfos)
	for _, as := range ws.Active {
		n += len(as.Entry.Tools)
	}
	// One allocation for every tool, and maps sized once: a listing of
	// 1,000 skills indexes thousands of tools and exits, and each fresh page
	// of memory costs it a page fault.
	refs := make([]ToolRef, 0, n)
	ws.Tools = make([]*ToolRef, 0, n)
	ws.byName = make(map[string]*ToolRef, n)
	add := func(t ToolRef) {
		refs = append(refs, t)
		ws.add(&refs[len(refs)-1])
	}
	add(ToolRef{Name: UseSkillTool, Skill: BuiltinSkill, Info: UseSkillInfo, handler: useSkill})
	for _, info := range scriptInfos {
		add(ToolRef{Name: info.Name, Skill: ExecSkill, Plugin: ExecPlugin, Info: info})
	}
	for _, as := range ws.Active {
		for _, t := range as.Entry.Tools {
			add(ToolRef{Name: t.Name, Skill: as.Entry.Canonical, Plugin: as.Entry.Canonical, Info: t.Info()})
		}
	}
	return nil
}

func (ws *Workspace) add(t *ToolRef) {
	ws.Tools = append(ws.Tools, t)
	if prev, taken := ws.byName[t.Name]; taken {
		t.Shadowed = true
		ws.Warnings = append(ws.Warnings, fmt.Sprintf("tool %s is defined by both %s and %s; %s wins, call the other as %s",
			t.Name, prev.Qualified(), t.Qualified(), prev.Qualified(), t.Qualified()))
	} else {
		ws.byName[t.Name] = t
	}
}

// names is the lookup by exposed and by qualified name, built at the first
// call rather than by Load: listings never call.
func (ws *Workspace) names() (byExposed, byQualified map[string]*ToolRef) {
	ws.namesOnce.Do(func() {
		ws.byExposed = make(map[string]*ToolRef, len(ws.Tools))
		ws.byQualified = make(map[string]*ToolRef, len(ws.Tools))
		for _, t := range ws.Tools {
			ws.byQualified[t.Qualified()] = t
			if _, taken := ws.byExposed[t.Exposed()]; !taken {
				ws.byExposed[t.Exposed()] = t
			}
		}
	})
	return ws.byExposed, ws.byQualified
}

func (ws *Workspace) hasScripts() bool {
	for _, as := range ws.Active {
		if as.Scripts > 0 && runsCode(as.Entry) {
			return true
		}
	}
	return false
}

// Skill returns the active skill with this name, or nil.
func (ws *Workspace) Skill(name string) *ActiveSkill {
	canon, err := manifest.Canonical(name)
	if err != nil {
		return nil
	}
	for _, as := range ws.Active {
		if as.Entry.Canonical == canon {
			return as
		}
	}
	return nil
}

// StateDir is $AGENT_HOME/state, where the host keeps its records.
func (ws *Workspace) StateDir() string { return filepath.Join(ws.Config.Home, "state") }

// lazyHost returns the plugin host with every active plugin registered. No
// plugin starts until its first call.
func (ws *Workspace) lazyHost() (*host.Host, error) {
	ws.hostOnce.Do(func() { ws.host, ws.hostErr = ws.newHost() })
	return ws.host, ws.hostErr
}

func (ws *Workspace) newHost() (*host.Host, error) {
	stateDir := ws.StateDir()
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	opts := []host.Option{host.WithLogger(ws.Config.logger()), host.WithStateDir(stateDir)}
	if ws.Config.PluginStarted != nil {
		opts = append(opts, host.WithStartHook(ws.Config.PluginStarted))
	}
	h := host.New(opts...)
	ws.plugins = map[string]*pluginUse{}
	register := func(p host.Plugin) {
		ws.plugins[p.Name] = &pluginUse{def: p}
		h.Register(p)
	}
	for _, as := range ws.Active {
		e := as.Entry
		if e.Plugin == nil || !runsCode(e) {
			continue
		}
		env := host.FilterEnv(ws.Config.Environ, as.Manifest.Permissions.Env, ws.Config.PassEnv)
		workspace, _ := ws.Config.WorkspaceRoot()
		perms := as.Manifest.Permissions
		declared := sandbox.Declared(perms.FS.Read, perms.FS.Write, perms.Network, sandbox.Home(env), workspace, "")
		register(host.Plugin{
			Name:    e.Canonical,
			Path:    e.Plugin.Path,
			SHA256:  e.Plugin.SHA256,
			Env:     env,
			Dir:     e.Path,
			Sandbox: &declared,
		})
	}
	if ws.hasScripts() {
		p, err := ws.execPlugin(stateDir)
		if err != nil {
			h.Close()
			return nil, err
		}
		register(p)
	}
	if p, ok, err := ws.basePlugin(); err != nil {
		h.Close()
		return nil, err
	} else if ok {
		register(p)
	}
	return h, nil
}

// execPlugin describes the built-in script plugin: the agent binary itself,
// re-executed as `agent __plugin exec`, configured through its environment.
func (ws *Workspace) execPlugin(stateDir string) (host.Plugin, error) {
	self, err := ws.Config.executable()
	if err != nil {
		return host.Plugin{}, fmt.Errorf("find the agent binary to run scripts: %w", err)
	}
	cfg := exec.Config{
		Timeout:   ws.Config.ScriptTimeout,
		MaxOutput: ws.Config.MaxScriptOutput,
		UV:        ws.Config.UV,
		CacheDir:  filepath.Join(stateDir, "exec"),
		PassEnv:   ws.Config.PassEnv,
	}
	if root, err := ws.Config.WorkspaceRoot(); err == nil {
		cfg.Workspace = root
	}
	var allowed []string
	for _, as := range ws.Active {
		if as.Scripts == 0 || !runsCode(as.Entry) {
			continue
		}
		cfg.Skills = append(cfg.Skills, exec.Skill{
			Name:    as.Entry.Canonical,
			Dir:     as.Entry.Path,
			Scripts: as.Manifest.Scripts,
			Ignore:  as.Manifest.ScriptsIgnore,
			Env:     as.Manifest.Permissions.Env,
			FSRead:  as.Manifest.Permissions.FS.Read,
			FSWrite: as.Manifest.Permissions.FS.Write,
			Network: as.Manifest.Permissions.Network,
		})
		allowed = append(allowed, as.Manifest.Permissions.Env...)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return host.Plugin{}, fmt.Errorf("encode the script plugin's configuration: %w", err)
	}
	env := append(host.FilterEnv(ws.Config.Environ, allowed, ws.Config.PassEnv), exec.ConfigEnv+"="+string(data))
	return host.Plugin{
		Name: ExecPlugin,
		Path: self,
		Args: []string{"__plugin", "exec"},
		Env:  env,
	}, nil
}

// invoke runs a resolved tool; Call is its only caller. Plugins start
// lazily here.
func (ws *Workspace) invoke(ctx context.Context, t *ToolRef, args json.RawMessage) (sdk.Result, error) {
	if t.handler != nil {
		return t.handler(ctx, ws, args)
	}
	if err := ws.beforeInvoke(ctx, t, args); err != nil {
		return sdk.Result{}, err
	}
	h, err := ws.lazyHost()
	if err != nil {
		return sdk.Result{}, err
	}
	if u := ws.plugins[t.Plugin]; u != nil {
		defer u.begin()()
	}
	return h.Invoke(ctx, t.Plugin, t.Info.Name, args)
}

// Close stops every plugin this workspace started.
func (ws *Workspace) Close() {
	if ws.host != nil {
		ws.host.Close()
	}
}
