package exec

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/lazyregexp"
)

// Skill is one active skill whose scripts the plugin may run.
type Skill struct {
	Name    string   `json:"name"`
	Dir     string   `json:"dir"`                // the skill folder (holds SKILL.md)
	Scripts []string `json:"scripts,omitempty"`  // SKILL.md `scripts`; empty means scripts/*.py
	Ignore  []string `json:"ignore,omitempty"`   // SKILL.md `scripts_ignore` globs
	Env     []string `json:"env,omitempty"`      // SKILL.md `permissions.env`; `*` wildcards
	FSRead  []string `json:"fs_read,omitempty"`  // SKILL.md `permissions.fs.read`
	FSWrite []string `json:"fs_write,omitempty"` // SKILL.md `permissions.fs.write`
	Network []string `json:"network,omitempty"`  // SKILL.md `permissions.network`
}

// Config is everything the plugin process needs. The host passes it as JSON
// in ConfigEnv; zero values mean the SPEC defaults.
type Config struct {
	Skills    []Skill       `json:"skills"`
	Timeout   time.Duration `json:"timeout,omitempty"`    // nanoseconds in JSON; default 60 s
	MaxOutput int64         `json:"max_output,omitempty"` // bytes of stdout kept; default 1 MiB
	UV        string        `json:"uv,omitempty"`         // AGENT_UV; a path or a name looked up on PATH
	CacheDir  string        `json:"cache_dir,omitempty"`  // help cache on disk; "" keeps it in memory only
	Workspace string        `json:"workspace,omitempty"`  // what $WORKSPACE means in permissions.fs
	// NoSandbox runs scripts unconfined: only the benchmarks that
	// compare the sandbox's cost set it.
	NoSandbox bool `json:"no_sandbox,omitempty"`
	// PassEnv is the configuration's pass_env: secrets a script may get
	// when its skill's permissions.env matches them (SPEC §12).
	PassEnv []string `json:"pass_env,omitempty"`
}

// ConfigEnv is the environment variable that carries Config as JSON.
const ConfigEnv = "AGENT_EXEC_CONFIG"

// ListInput is script_list's input.
type ListInput struct {
	SkillName string `json:"skill_name,omitempty" description:"Only list this skill's scripts; all active skills when empty"`
}

// ListEntry is one script in script_list's result.
type ListEntry struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Error string `json:"error,omitempty"` // why the script cannot run (bad metadata, a symbolic link)
}

// HelpInput is script_help's input.
type HelpInput struct {
	SkillName  string `json:"skill_name" description:"The skill that owns the script"`
	ScriptName string `json:"script_name" description:"The script name from script_list (status and status.py both work)"`
}

// HelpResult is script_help's result.
type HelpResult struct {
	HelpText string `json:"help_text"`
	Usage    string `json:"usage"` // the first "usage:" line, or ""
}

// RunInput is script_run's input.
type RunInput struct {
	SkillName  string            `json:"skill_name" description:"The skill that owns the script"`
	ScriptName string            `json:"script_name" description:"The script name from script_list (status and status.py both work)"`
	Args       []string          `json:"args,omitempty" description:"Command-line arguments (at most 100 and 4 KiB in total)"`
	JSON       *bool             `json:"json,omitempty" description:"Append --json and parse stdout as JSON (default true)"`
	Env        map[string]string `json:"env,omitempty" description:"Extra environment variables; only names the skill allows in permissions.env"`
}

// service implements the three tools independently of the sdk plumbing:
// each returns its value and the message for the caller.
type service struct {
	cfg     Config
	run     *runner
	environ func() []string
	help    *helpCache
	// bytecode is bytecodeFolder; the benchmarks replace it to measure
	// runs without the farm.
	bytecode func(root string, in pyInfo) string
}

func newService(cfg Config) *service {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	return &service{
		cfg:      cfg,
		bytecode: bytecodeFolder,
		run: &runner{
			lookPath:  lookPath,
			timeout:   cfg.Timeout,
			maxOutput: cfg.MaxOutput,
			uv:        cfg.UV,
			waitDelay: 2 * time.Second,
		},
		environ: os.Environ,
		help:    &helpCache{mem: map[string]HelpResult{}, dir: cfg.CacheDir},
	}
}

// canonical is the skill-name form of SPEC §4.
func canonical(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), "_", "-")
}

func (s *service) skill(name string) (Skill, error) {
	if name == "" {
		return Skill{}, errorf(CodeInvalidName, "skill_name is empty; use a skill name from script_list")
	}
	if strings.ContainsAny(name, "/\\ \x00") || strings.Contains(name, "..") || len(name) > 64 {
		return Skill{}, errorf(CodeInvalidName, "%q is not a skill name (letters, digits, - and _, at most 64)", name)
	}
	want := canonical(name)
	names := make([]string, 0, len(s.cfg.Skills))
	for _, sk := range s.cfg.Skills {
		if canonical(sk.Name) == want {
			return sk, nil
		}
		names = append(names, sk.Name)
	}
	avail := "no skill with scripts is active"
	if len(names) > 0 {
		avail = "active: " + strings.Join(names, ", ")
	}
	return Skill{}, errorf(CodeNotFound, "no active skill named %q (%s)", name, avail)
}

func (s *service) list(_ context.Context, in ListInput) (map[string][]ListEntry, string, error) {
	skills := s.cfg.Skills
	if in.SkillName != "" {
		sk, err := s.skill(in.SkillName)
		if err != nil {
			return nil, "", err
		}
		skills = []Skill{sk}
	}
	out := map[string][]ListEntry{}
	n := 0
	var problems []string
	for _, sk := range skills {
		scripts, err := Discover(sk.Dir, sk.Scripts, sk.Ignore)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", sk.Name, err))
		}
		entries := []ListEntry{}
		for _, sc := range scripts {
			e := ListEntry{Name: sc.Name, Path: sc.Path}
			if sc.Err != nil {
				e.Error = sc.Err.Error()
			}
			entries = append(entries, e)
			n++
		}
		out[sk.Name] = entries
	}
	msg := fmt.Sprintf("%d scripts in %d skills", n, len(skills))
	if len(problems) > 0 {
		msg += "; " + strings.Join(problems, "; ")
	}
	return out, msg, nil
}

// target is a resolved script, read once so that what runs is what was
// checked.
type target struct {
	skill  Skill
	script Script
	src    []byte
	meta   *Metadata
}

func (s *service) resolve(skillName, scriptName string) (*target, error) {
	sk, err := s.skill(skillName)
	if err != nil {
		return nil, err
	}
	if err := checkName(scriptName); err != nil {
		return nil, errorf(CodeInvalidName, "%v", err)
	}
	list, err := List(sk.Dir, sk.Scripts, sk.Ignore)
	if err != nil {
		return nil, toolError(err)
	}
	sc, err := find(list, scriptName)
	if err != nil {
		return nil, toolError(err)
	}
	if sc.Err != nil {
		return nil, toolError(sc.Err)
	}
	src, err := readScript(sc.Path)
	if err != nil {
		return nil, toolError(err)
	}
	meta, err := ParseMetadata(src)
	if err != nil {
		return nil, errorf(CodeExecutionFailed, "%s: %v; fix the `# /// script` block", sc.Path, err)
	}
	return &target{skill: sk, script: sc, src: src, meta: meta}, nil
}

// toolError maps discovery errors to tool codes.
func toolError(err error) error {
	switch {
	case errors.Is(err, ErrInvalidName):
		return errorf(CodeInvalidName, "%v", err)
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrRejected):
		return errorf(CodeNotFound, "%v", err)
	case errors.Is(err, os.ErrPermission):
		return errorf(CodePermissionDenied, "%v", err)
	}
	return errorf(CodeExecutionFailed, "%v", err)
}

func deps(m *Metadata) []string {
	if m == nil {
		return nil
	}
	return m.Dependencies
}

func (s *service) runScript(ctx context.Context, in RunInput) (json.RawMessage, string, error) {
	if err := checkArgs(in.Args); err != nil {
		return nil, "", err
	}
	t, err := s.resolve(in.SkillName, in.ScriptName)
	if err != nil {
		return nil, "", err
	}
	env, err := buildEnv(s.environ(), t.skill.Env, s.cfg.PassEnv, in.Env)
	if err != nil {
		return nil, "", err
	}
	wantJSON := in.JSON == nil || *in.JSON
	interp, err := s.run.interpreter(deps(t.meta))
	if err != nil {
		return nil, "", err
	}
	name := filepath.Base(t.script.Path)
	ctx, span := tracer.Start(ctx, "script "+name)
	defer span.End()
	env = withTraceparent(ctx, env)
	out, err := s.runConfined(ctx, t, interp, in.Args, wantJSON, env)
	endScriptSpan(span, out, err)
	if err != nil {
		return nil, "", err
	}
	if err := failure(name, out, s.run); err != nil {
		return nil, "", err
	}
	stdout := text(out.stdout, out.truncated(), false)
	var notes []string
	if out.truncated() {
		notes = append(notes, fmt.Sprintf("warning: output truncated: the script wrote %d bytes of stdout and only the first %d were kept; ask for less output or raise AGENT_MAX_SCRIPT_OUTPUT",
			out.stdoutTotal, len(out.stdout)))
	}
	if interp.note != "" {
		notes = append(notes, interp.note)
	}
	var value json.RawMessage
	if wantJSON {
		trimmed := strings.TrimSpace(stdout)
		if trimmed == "" || !json.Valid([]byte(trimmed)) {
			preview := stdout
			if utf8.RuneCountInString(preview) > parsePreview {
				preview = string([]rune(preview)[:parsePreview]) + "…"
			}
			msg := fmt.Sprintf("%s was run with --json but its stdout is not JSON", name)
			if out.truncated() {
				msg += fmt.Sprintf(" (stdout was truncated at %d bytes)", len(out.stdout))
			}
			return nil, "", errorf(CodeParseError, "%s; stdout starts with %q%s; the script should print only JSON with --json, or call script_run with json=false",
				msg, preview, stderrSuffix(out))
		}
		value = json.RawMessage(trimmed)
	} else {
		value, _ = json.Marshal(stdout)
	}
	msg := fmt.Sprintf("%s finished in %s", name, out.duration.Round(time.Millisecond))
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	return value, msg, nil
}

// failure turns a timeout or a non-zero exit into its tool error.
func failure(name string, out *outcome, r *runner) error {
	if out.timedOut {
		return errorf(CodeTimeout, "%s did not finish within %s and was stopped with all its child processes; raise AGENT_SCRIPT_TIMEOUT or ask for less work%s",
			name, r.timeout, stderrSuffix(out))
	}
	if out.signal != 0 {
		return errorf(CodeExecutionFailed, "%s was killed by signal %d (%s)%s", name, int(out.signal), out.signal, stderrSuffix(out))
	}
	if out.exitCode != 0 {
		return errorf(CodeExecutionFailed, "%s exited with code %d%s", name, out.exitCode, stderrSuffix(out))
	}
	return nil
}

func stderrSuffix(out *outcome) string {
	tail := strings.TrimSpace(text(out.stderr, false, len(out.stderr) >= stderrTail))
	if tail == "" {
		return "; stderr is empty"
	}
	return "; stderr (last 500 bytes): " + tail
}

var usageLine = lazyregexp.New(`(?im)^[ \t]*usage:.*$`)

func (s *service) scriptHelp(ctx context.Context, in HelpInput) (HelpResult, string, error) {
	t, err := s.resolve(in.SkillName, in.ScriptName)
	if err != nil {
		return HelpResult{}, "", err
	}
	name := filepath.Base(t.script.Path)
	key := helpKey(t.script.Path, t.src)
	if res, ok := s.help.get(key); ok {
		return res, fmt.Sprintf("help for %s (cached)", name), nil
	}
	env, err := buildEnv(s.environ(), t.skill.Env, s.cfg.PassEnv, nil)
	if err != nil {
		return HelpResult{}, "", err
	}
	interp, err := s.run.interpreter(deps(t.meta))
	if err != nil {
		return HelpResult{}, "", err
	}
	out, err := s.runConfined(ctx, t, interp, []string{"--help"}, false, env)
	if err != nil {
		return HelpResult{}, "", err
	}
	if err := failure(name, out, s.run); err != nil {
		return HelpResult{}, "", err
	}
	help := text(out.stdout, out.truncated(), false)
	res := HelpResult{HelpText: help, Usage: strings.TrimSpace(usageLine.FindString(help))}
	msg := "help for " + name
	if interp.note != "" {
		msg += "; " + interp.note
	}
	if err := s.help.put(key, res); err != nil {
		msg += fmt.Sprintf("; the help cache could not be written (%v)", err)
	}
	return res, msg, nil
}

// HelpCacheFile is where the help cache (under cacheDir) keeps the help of
// the script at path, so that removing a skill can remove its entries.
func HelpCacheFile(cacheDir, path string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return filepath.Join(cacheDir, helpKey(path, src)+".json"), nil
}

// helpKey is the file's sha256 plus a short hash of its path: argparse puts
// the file name into the help text, so two copies of one script differ.
func helpKey(path string, src []byte) string {
	sum := sha256.Sum256(src)
	p := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:]) + "-" + hex.EncodeToString(p[:8])
}

// helpCache keeps help results in memory and, when dir is set, on disk.
type helpCache struct {
	mu  sync.Mutex
	mem map[string]HelpResult
	dir string
}

func (c *helpCache) get(key string) (HelpResult, bool) {
	c.mu.Lock()
	res, ok := c.mem[key]
	c.mu.Unlock()
	if ok || c.dir == "" {
		return res, ok
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+".json"))
	if err != nil || json.Unmarshal(b, &res) != nil {
		return HelpResult{}, false
	}
	c.mu.Lock()
	c.mem[key] = res
	c.mu.Unlock()
	return res, true
}

func (c *helpCache) put(key string, res HelpResult) error {
	c.mu.Lock()
	c.mem[key] = res
	c.mu.Unlock()
	if c.dir == "" {
		return nil
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return fmt.Errorf("write help cache: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(c.dir, key+".json"), b, 0o600); err != nil {
		return fmt.Errorf("write help cache: %w", err)
	}
	return nil
}
