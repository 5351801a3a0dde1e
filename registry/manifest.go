package registry

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"gopkg.in/yaml.v3"
)

// ManifestFile is the name of a skill's manifest.
const ManifestFile = "SKILL.md"

// MaxDescriptionLen is the description length above which a warning is given.
const MaxDescriptionLen = 1024

// maxManifestSize bounds how much of a SKILL.md is read; real ones are a few KB.
const maxManifestSize = 4 << 20

// PluginSpec says how a skill's Go plugin is obtained: built from a main
// package (Build) or a prebuilt executable inside the skill (Command).
type PluginSpec struct {
	Build   string `yaml:"build" json:"build,omitempty"`
	Command string `yaml:"command" json:"command,omitempty"`
}

// Permissions lists what a skill's scripts and plugin may see.
type Permissions struct {
	Env []string `yaml:"env" json:"env,omitempty"`
}

// Manifest is a parsed SKILL.md (SPEC §3).
type Manifest struct {
	Name          string         `json:"name"`
	Description   string         `json:"description"`
	Version       string         `json:"version,omitempty"`
	Author        string         `json:"author,omitempty"`
	Repository    string         `json:"repository,omitempty"`
	License       string         `json:"license,omitempty"`
	Compatibility string         `json:"compatibility,omitempty"`
	Metadata      map[string]any `json:"metadata,omitempty"`

	MinAgentVersion string `json:"min_agent_version,omitempty"`
	MaxAgentVersion string `json:"max_agent_version,omitempty"`
	AgentVersion    string `json:"agent_version,omitempty"`

	Plugin        *PluginSpec `json:"plugin,omitempty"`
	Scripts       []string    `json:"scripts,omitempty"`
	ScriptsIgnore []string    `json:"scripts_ignore,omitempty"`
	Permissions   Permissions `json:"permissions"`

	// Claude Code and Agent Skills fields, kept so that info can show them.
	AllowedTools           []string `json:"allowed-tools,omitempty"`
	ArgumentHint           string   `json:"argument-hint,omitempty"`
	DisableModelInvocation bool     `json:"disable-model-invocation,omitempty"`
	UserInvocable          *bool    `json:"user-invocable,omitempty"` // nil means true
	Context                string   `json:"context,omitempty"`
	Agent                  string   `json:"agent,omitempty"`
	Model                  string   `json:"model,omitempty"`

	// Extra holds unknown keys; each one also produced a warning.
	Extra map[string]any `json:"extra,omitempty"`

	// Body is the markdown after the closing ---.
	Body string `json:"-"`
}

// IsUserInvocable applies the default of user-invocable (true).
func (m *Manifest) IsUserInvocable() bool { return m.UserInvocable == nil || *m.UserInvocable }

// Problem is one error or warning about a file, with its 1-based line (0 when
// it concerns the whole file).
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Message)
}

// ManifestError carries every error found in one SKILL.md.
type ManifestError struct {
	Problems []Problem
}

func (e *ManifestError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems in SKILL.md:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

func (e *ManifestError) Unwrap() error { return ErrInvalidManifest }

// LoadManifest reads and parses dir/SKILL.md. A symlinked SKILL.md is refused
// so that a skill can never make the host read a file outside it.
func LoadManifest(dir string) (*Manifest, []Problem, error) {
	file := filepath.Join(dir, ManifestFile)
	data, err := readManifestFile(file)
	if err != nil {
		var me *ManifestError
		if errors.As(err, &me) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("load manifest: %w", err)
	}
	return ParseManifest(file, data)
}

// knownKeys is the set of front matter keys the manifest understands.
var knownKeys = []string{
	"name", "description", "version", "author", "repository", "license", "compatibility", "metadata",
	"min_agent_version", "max_agent_version", "agent_version", "plugin", "scripts", "scripts_ignore",
	"permissions", "allowed-tools", "argument-hint", "disable-model-invocation", "user-invocable",
	"context", "agent", "model",
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// ParseManifest parses a SKILL.md. file is used in messages only. It returns
// warnings alongside a manifest, or a *ManifestError listing every error.
func ParseManifest(file string, data []byte) (*Manifest, []Problem, error) {
	p := &parser{file: file}
	m := p.parse(data)
	SortProblems(p.errs)
	SortProblems(p.warns)
	if len(p.errs) > 0 {
		return nil, p.warns, &ManifestError{Problems: p.errs}
	}
	return m, p.warns, nil
}

type parser struct {
	file        string
	errs, warns []Problem
	offset      int             // file line of the first front matter line, minus one
	keyLines    map[string]int  // line of each scalar value, for later validation messages
	badType     map[string]bool // keys that already have a type error
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.warns = append(p.warns, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

const frontMatterHelp = "SKILL.md must start with YAML front matter: a first line '---', then keys such as 'name: my-skill' and 'description: what it does', then a closing '---'"

func (p *parser) parse(data []byte) *Manifest {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		p.errorf(1, "SKILL.md starts with a UTF-8 byte order mark (BOM); save it as UTF-8 without BOM")
		return nil
	}
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		p.errorf(line, "SKILL.md is not valid UTF-8; save it as UTF-8")
		return nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) == 0 || !isFence(lines[0]) {
		p.errorf(1, "%s", frontMatterHelp)
		return nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if isFence(lines[i]) || strings.TrimRight(lines[i], " \t\r\n") == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		p.errorf(1, "the front matter opened on line 1 is never closed; add a line '---' after the YAML")
		return nil
	}
	front := strings.Join(lines[1:end], "")
	body := strings.Join(lines[end+1:], "")
	p.offset = 1

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line := 1
		if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil {
				line = n + p.offset
			}
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		msg = yamlLineRE.ReplaceAllString(msg, "")
		msg = strings.TrimLeft(msg, ": ")
		p.errorf(line, "invalid YAML in front matter: %s; fix the YAML syntax (quote values that contain ': ' or start with special characters)", msg)
		return nil
	}
	m := &Manifest{Body: body}
	var root *yaml.Node
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		p.errorf(1, "the front matter is empty; add 'name:' and 'description:'")
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(p.line(root), "the front matter must be a YAML mapping of keys to values, such as 'name: my-skill'")
		return nil
	}
	seen := map[string]int{}
	nameLine, descLine := 0, 0
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		line := p.line(k)
		if k.Kind != yaml.ScalarNode {
			p.errorf(line, "front matter keys must be plain names")
			continue
		}
		if prev, dup := seen[key]; dup {
			p.errorf(line, "key %q appears twice (first on line %d); keep one", key, prev)
			continue
		}
		seen[key] = line
		switch key {
		case "name":
			m.Name, nameLine = p.str(key, v), line
		case "description":
			m.Description, descLine = p.str(key, v), line
		case "version":
			m.Version = p.str(key, v)
		case "author":
			m.Author = p.str(key, v)
		case "repository":
			m.Repository = p.str(key, v)
		case "license":
			m.License = p.str(key, v)
		case "compatibility":
			m.Compatibility = p.str(key, v)
		case "min_agent_version":
			m.MinAgentVersion = p.str(key, v)
		case "max_agent_version":
			m.MaxAgentVersion = p.str(key, v)
		case "agent_version":
			m.AgentVersion = p.str(key, v)
		case "argument-hint":
			m.ArgumentHint = p.str(key, v)
		case "context":
			m.Context = p.str(key, v)
		case "agent":
			m.Agent = p.str(key, v)
		case "model":
			m.Model = p.str(key, v)
		case "metadata":
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				p.errorf(p.line(v), "metadata must be a mapping, for example 'metadata: {team: data}'")
				continue
			}
			var md map[string]any
			if err := v.Decode(&md); err != nil {
				p.errorf(p.line(v), "metadata: %v", err)
				continue
			}
			m.Metadata = jsonSafe(md).(map[string]any)
		case "plugin":
			m.Plugin = p.plugin(v)
		case "scripts":
			m.Scripts = p.strList(key, v, false)
			for _, s := range m.Scripts {
				if s == "" || strings.ContainsAny(s, `/\`) || strings.Contains(s, "..") {
					p.errorf(p.line(v), "scripts: %q is not a script name; list names like 'status' or 'status.py' from scripts/", s)
				}
			}
		case "scripts_ignore":
			m.ScriptsIgnore = p.strList(key, v, false)
			for _, g := range m.ScriptsIgnore {
				if _, err := path.Match(g, "x"); err != nil {
					p.errorf(p.line(v), "scripts_ignore: %q is not a valid glob: %v", g, err)
				}
			}
		case "permissions":
			m.Permissions = p.permissions(v)
		case "allowed-tools":
			m.AllowedTools = p.strList(key, v, true)
		case "disable-model-invocation":
			if b, ok := p.boolean(key, v); ok {
				m.DisableModelInvocation = b
			}
		case "user-invocable":
			if b, ok := p.boolean(key, v); ok {
				m.UserInvocable = &b
			}
		default:
			var x any
			if err := v.Decode(&x); err != nil {
				p.errorf(p.line(v), "%s: %v", key, err)
				continue
			}
			if m.Extra == nil {
				m.Extra = map[string]any{}
			}
			m.Extra[key] = jsonSafe(x)
			p.warnf(line, "unknown key %q is kept but not used; check the spelling (known keys: %s)", key, strings.Join(knownKeys, ", "))
		}
	}
	p.validate(m, nameLine, descLine)
	return m
}

func (p *parser) validate(m *Manifest, nameLine, descLine int) {
	if nameLine == 0 && !p.badType["name"] {
		p.errorf(1, "the required field 'name' is missing; add 'name: my-skill' to the front matter")
	} else if m.Name == "" && !p.badType["name"] {
		p.errorf(nameLine, "'name' is empty; set it to the skill's name, for example 'name: my-skill'")
	} else if _, err := Canonical(m.Name); err != nil && !p.badType["name"] {
		p.errorf(nameLine, "name: %v", err)
	}
	if descLine == 0 {
		p.errorf(1, "the required field 'description' is missing; add 'description: what the skill does and when to use it'")
	} else if strings.TrimSpace(m.Description) == "" && !p.badType["description"] {
		p.errorf(descLine, "'description' is empty; say what the skill does and when to use it")
	} else if n := utf8.RuneCountInString(m.Description); n > MaxDescriptionLen {
		p.warnf(descLine, "description is %d characters, over the recommended %d; consider moving detail into the body", n, MaxDescriptionLen)
	}
	for _, f := range []struct{ key, val string }{{"version", m.Version}, {"min_agent_version", m.MinAgentVersion}, {"max_agent_version", m.MaxAgentVersion}} {
		if f.val == "" {
			continue
		}
		if _, err := semver.NewVersion(f.val); err != nil {
			p.errorf(p.keyLine(f.key), "%s %q is not a semantic version; use a form like 1.2.0", f.key, f.val)
		}
	}
	if m.AgentVersion != "" {
		if _, err := semver.NewConstraint(m.AgentVersion); err != nil {
			p.errorf(p.keyLine("agent_version"), "agent_version %q is not a version constraint; use a form like \">=0.2, <1\"", m.AgentVersion)
		}
	}
}

// keyLine is the line of key's value, recorded by str.
func (p *parser) keyLine(key string) int { return p.keyLines[key] }

func (p *parser) line(n *yaml.Node) int { return n.Line + p.offset }

func isNull(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.Tag == "!!null" }

func (p *parser) str(key string, v *yaml.Node) string {
	p.rememberLine(key, v)
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if isNull(v) {
		return ""
	}
	if v.Kind != yaml.ScalarNode {
		p.errorf(p.line(v), "%s must be a string, not a %s", key, kindName(v))
		if p.badType == nil {
			p.badType = map[string]bool{}
		}
		p.badType[key] = true
		return ""
	}
	return v.Value
}

func (p *parser) rememberLine(key string, v *yaml.Node) {
	if p.keyLines == nil {
		p.keyLines = map[string]int{}
	}
	p.keyLines[key] = p.line(v)
}

func (p *parser) boolean(key string, v *yaml.Node) (bool, bool) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		var b bool
		if err := v.Decode(&b); err == nil {
			return b, true
		}
	}
	p.errorf(p.line(v), "%s must be true or false", key)
	return false, false
}

// strList accepts a YAML list of strings; when split is set it also accepts
// one string of items separated by commas or spaces (allowed-tools is
// written both ways in the wild).
func (p *parser) strList(key string, v *yaml.Node, split bool) []string {
	if isNull(v) {
		return nil
	}
	if v.Kind == yaml.ScalarNode && split {
		return splitTools(v.Value)
	}
	if v.Kind != yaml.SequenceNode {
		p.errorf(p.line(v), "%s must be a list, for example '%s: [a, b]'", key, key)
		return nil
	}
	out := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		if it.Kind != yaml.ScalarNode || isNull(it) {
			p.errorf(p.line(it), "%s: every item must be a string", key)
			continue
		}
		out = append(out, it.Value)
	}
	return out
}

// splitTools splits "Read, Bash(git add:*) Grep" on commas and white space
// outside parentheses.
func splitTools(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

func (p *parser) plugin(v *yaml.Node) *PluginSpec {
	if isNull(v) {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		p.errorf(p.line(v), "plugin must be a mapping: 'plugin: {build: ./plugin}' or 'plugin: {command: bin/tool}'")
		return nil
	}
	ps := &PluginSpec{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "build":
			ps.Build = p.str("plugin.build", val)
		case "command":
			ps.Command = p.str("plugin.command", val)
		default:
			p.warnf(p.line(k), "unknown key %q under plugin is ignored; use build or command", k.Value)
		}
	}
	switch {
	case ps.Build != "" && ps.Command != "":
		p.errorf(p.line(v), "plugin sets both build and command; keep one")
	case ps.Build == "" && ps.Command == "":
		p.errorf(p.line(v), "plugin needs build (a Go main package, for example ./plugin) or command (a prebuilt executable in the skill)")
	}
	for _, f := range []string{ps.Build, ps.Command} {
		if f != "" && !insideRel(f) {
			p.errorf(p.line(v), "plugin path %q must be relative and stay inside the skill folder", f)
		}
	}
	return ps
}

// insideRel reports whether a slash or OS separated relative path stays
// inside its base directory.
func insideRel(p string) bool {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return false
	}
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return c != ".." && !strings.HasPrefix(c, "../")
}

func (p *parser) permissions(v *yaml.Node) Permissions {
	var perms Permissions
	if isNull(v) {
		return perms
	}
	if v.Kind != yaml.MappingNode {
		p.errorf(p.line(v), "permissions must be a mapping, for example 'permissions: {env: [API_KEY]}'")
		return perms
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "env":
			perms.Env = p.strList("permissions.env", val, false)
			for _, e := range perms.Env {
				if e == "" || strings.ContainsAny(e, "= \t\n") {
					p.errorf(p.line(val), "permissions.env: %q is not an environment variable name", e)
				}
			}
		default:
			p.warnf(p.line(k), "unknown key %q under permissions is ignored; only env is supported", k.Value)
		}
	}
	return perms
}

func kindName(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	}
	return "value"
}

func isFence(line string) bool { return strings.TrimRight(line, " \t\r\n") == "---" }

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// SortProblems orders problems by file and line, for stable output.
func SortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		return ps[i].Line < ps[j].Line
	})
}

// jsonSafe converts what yaml.v3 decodes into values encoding/json can
// print: maps with non-string keys get string keys, so that info --json
// never fails on odd metadata.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = jsonSafe(val)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[fmt.Sprint(k)] = jsonSafe(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = jsonSafe(val)
		}
		return out
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Sprint(x)
		}
	}
	return v
}
