package manifest

import (
	"bytes"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Masterminds/semver/v3"
	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"golang.org/x/text/unicode/norm"
	"gopkg.in/yaml.v3"
)

// ManifestFile is the name of a skill's manifest. LowerManifestFile,
// skill.md, is accepted where there is no SKILL.md (FindName).
const (
	ManifestFile      = "SKILL.md"
	LowerManifestFile = "skill.md"
)

// MaxDescriptionLen is the description length above which a warning is given.
const MaxDescriptionLen = 1024

// MaxManifestSize bounds how much of a SKILL.md is read; real ones are a few KB.
const MaxManifestSize = 4 << 20

// PluginSpec says how a skill's Go plugin is obtained: built from a main
// package (Build) or a prebuilt executable inside the skill (Command).
type PluginSpec struct {
	Build   string `yaml:"build" json:"build,omitempty"`
	Command string `yaml:"command" json:"command,omitempty"`
}

// Permissions lists what a skill's scripts and plugin may see and reach.
type Permissions struct {
	Env []string `yaml:"env" json:"env,omitempty"`
	// FS are the paths beyond the skill's own folder (read) and its
	// per-call temp folder (write) that the sandbox lets its code use;
	// `~`, `$WORKSPACE` and `$TMP` are expanded when it runs.
	FS FSPermissions `yaml:"fs" json:"fs,omitzero"`
	// Network lists the host:port its code may reach, or "*" for the
	// host's whole network; none means no network at all.
	Network []string `yaml:"network" json:"network,omitempty"`
}

// FSPermissions is permissions.fs.
type FSPermissions struct {
	Read  []string `yaml:"read" json:"read,omitempty"`
	Write []string `yaml:"write" json:"write,omitempty"`
}

// Manifest is a parsed SKILL.md (SPEC §3).
type Manifest struct {
	// Name can be given to Canonical. When the front matter's name needed
	// recovery ("Hook Development"), DisplayName keeps it as written.
	Name          string         `json:"name"`
	DisplayName   string         `json:"display_name,omitempty"`
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

	Plugin *PluginSpec `json:"plugin,omitempty"`
	// CGO lets the plugin's build run the C toolchain (SPEC §3
	// agent.cgo); without it the build has CGO_ENABLED=0 (SPEC §8).
	CGO           bool        `json:"cgo,omitempty"`
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
	// Claude Code's newer fields, kept and shown, not acted on: this host
	// has no file-triggered activation (paths), no hooks and no effort
	// levels. display-name sets DisplayName.
	WhenToUse       string         `json:"when_to_use,omitempty"`
	Paths           []string       `json:"paths,omitempty"`
	Hooks           map[string]any `json:"hooks,omitempty"`
	Shell           string         `json:"shell,omitempty"`
	DisallowedTools []string       `json:"disallowed-tools,omitempty"`
	Effort          string         `json:"effort,omitempty"`
	Background      bool           `json:"background,omitempty"`

	// Extra holds unknown keys; each one also produced a warning.
	Extra map[string]any `json:"extra,omitempty"`

	// Keys are the front matter's top-level keys in file order, and
	// KeyLines their lines: CheckStrict reports those outside the six of
	// the Agent Skills specification.
	Keys     []string       `json:"-"`
	KeyLines map[string]int `json:"-"`

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
	// Recovered marks a warning about front matter that was read the way
	// Claude Code reads it although it breaks the Agent Skills
	// specification (SPEC §3); validate --strict reports it as an error.
	Recovered bool `json:"recovered,omitempty"`
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

// knownKeys is the set of front matter keys the manifest understands.
var knownKeys = []string{
	"name", "description", "version", "author", "repository", "license", "compatibility", "metadata",
	"min_agent_version", "max_agent_version", "agent_version", "plugin", "scripts", "scripts_ignore",
	"permissions", "allowed-tools", "argument-hint", "disable-model-invocation", "user-invocable",
	"context", "agent", "model",
	"when_to_use", "paths", "hooks", "shell", "disallowed-tools", "effort", "background", "display-name",
}

// MaxDepth bounds how deeply front matter may nest. Real skills use two or
// three levels; a bound keeps 10,000-deep YAML from reaching the JSON
// encoder, which refuses it, after validate and add accepted it.
const MaxDepth = 32

var yamlLineRE = lazyregexp.New(`line (\d+)`)

// ParseManifest parses a SKILL.md. file is used in messages, and the name
// of the folder holding it is the skill's name when the front matter gives
// none. It returns warnings (recoveries among them, SPEC §3) alongside a
// manifest, or a *ManifestError listing every error.
func ParseManifest(file string, data []byte) (*Manifest, []Problem, error) {
	return ParseManifestIn(file, folderOf(file), data)
}

// folderOf is the name of the folder holding file ("bundled:base/SKILL.md"
// gives "base"), or "" when file has no folder.
func folderOf(file string) string {
	d := path.Dir(filepath.ToSlash(file))
	if i := strings.LastIndex(d, ":"); i >= 0 {
		d = d[i+1:]
	}
	b := path.Base(d)
	if b == "." || b == "/" || b == ".." {
		return ""
	}
	return b
}

// ParseManifestIn parses data as the SKILL.md file of the folder named folder,
// which gives the skill its name when the front matter has none.
func ParseManifestIn(file, folder string, data []byte) (*Manifest, []Problem, error) {
	p := &parser{file: file, folder: folder}
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
	folder      string
	errs, warns []Problem
	offset      int             // file line of the first front matter line, minus one
	src         []string        // the front matter lines YAML parsed, after recovery
	keyLines    map[string]int  // line of each scalar value, for later validation messages
	badType     map[string]bool // keys that already have a type error
	topPerm     map[string]int  // line of each top-level permissions.env, .fs.read, .fs.write, .network
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) warnf(line int, format string, args ...any) {
	p.warns = append(p.warns, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// recoverf records a recovery (SPEC §3): a warning that `validate --strict`
// turns into an error.
func (p *parser) recoverf(line int, format string, args ...any) {
	p.warns = append(p.warns, Problem{File: p.file, Line: line, Message: fmt.Sprintf(format, args...), Recovered: true})
}

func (p *parser) parse(data []byte) *Manifest {
	// Editors on Windows save a BOM and Claude Code skips it (SPEC §3);
	// the hash still covers the file as written.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		line := 1 + bytes.Count(data[:firstInvalidUTF8(data)], []byte("\n"))
		p.errorf(line, "SKILL.md is not valid UTF-8; save it as UTF-8")
		return nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if !isFence(lines[0]) {
		// No front matter: Claude Code loads such a skill, so do we.
		p.recoverf(1, "SKILL.md has no YAML front matter, so the name comes from the folder and the description from the first paragraph; add front matter: a line '---', 'name: %s', 'description: what it does and when to use it', then '---'", nameHint(p.folder))
		m := &Manifest{Body: string(data)}
		p.validate(m, 0, 0, 1)
		return m
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
	if !isFence(lines[end]) {
		p.recoverf(end+1, "the front matter ends with '...', which agents that split on '---' do not read; end it with '---'")
	}
	body := strings.Join(lines[end+1:], "")
	p.offset = 1
	root := p.loadYAML(lines[1:end])
	if p.errs != nil {
		return nil
	}
	m := &Manifest{Body: body}
	if root == nil || isNull(root) {
		// "---\n---": nothing declared; the defaults apply.
		p.validate(m, 0, 0, end+2)
		return m
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(p.line(root), "the front matter must be a YAML mapping of keys to values, such as 'name: my-skill'")
		return nil
	}
	if !p.checkTree(root, "", 1) {
		return nil
	}
	seen := map[string]bool{}
	nameLine, descLine := 0, 0
	var hostMeta []hostValue
	var displayName string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		key := k.Value
		line := p.line(k)
		if k.Kind != yaml.ScalarNode {
			p.errorf(line, "front matter keys must be plain names")
			continue
		}
		if seen[key] {
			continue // checkTree reported it
		}
		seen[key] = true
		m.Keys = append(m.Keys, key)
		if m.KeyLines == nil {
			m.KeyLines = map[string]int{}
		}
		m.KeyLines[key] = line
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
		case "when_to_use":
			m.WhenToUse = p.str(key, v)
		case "shell":
			m.Shell = p.str(key, v)
		case "effort":
			m.Effort = p.str(key, v)
		case "display-name":
			displayName = p.str(key, v)
		case "paths":
			m.Paths = p.strList(key, v, true)
		case "disallowed-tools":
			m.DisallowedTools = p.strList(key, v, true)
		case "background":
			if b, ok := p.boolean(key, v); ok {
				m.Background = b
			}
		case "hooks":
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				p.errorf(p.line(v), "hooks must be a mapping of events to hook lists, as in Claude Code's settings")
				continue
			}
			var hooks map[string]any
			if err := v.Decode(&hooks); err != nil {
				p.errorf(p.line(v), "hooks: %v", err)
				continue
			}
			m.Hooks = jsonSafe(hooks).(map[string]any)
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
			hostMeta = p.hostMetadata(v)
		case "plugin":
			m.Plugin = p.plugin(v)
		case "scripts":
			m.Scripts = p.strList(key, v, false)
			p.checkScripts(key, p.line(v), m.Scripts)
		case "scripts_ignore":
			m.ScriptsIgnore = p.strList(key, v, false)
			p.checkIgnore(key, p.line(v), m.ScriptsIgnore)
		case "permissions":
			m.Permissions = p.permissions(v)
		case "allowed-tools":
			m.AllowedTools = p.strList(key, v, true)
		case "disable-model-invocation":
			if b, ok := p.boolean(key, v); ok {
				m.DisableModelInvocation = b
			}
		case "cgo":
			if b, ok := p.boolean(key, v); ok {
				m.CGO = b
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
	p.applyHostMetadata(m, hostMeta)
	p.validate(m, nameLine, descLine, end+2)
	if displayName != "" {
		// Claude Code's display-name is what to show, whatever name says.
		m.DisplayName = displayName
	}
	return m
}

// loadYAML parses the front matter lines. When strict YAML fails, each
// top-level `key: value` line whose value YAML cannot read on its own (an
// unquoted ': ', text after a closing bracket) is quoted as written, and the
// whole is parsed again (SPEC §3). Nested blocks are never rewritten.
func (p *parser) loadYAML(front []string) *yaml.Node {
	p.src = front
	var doc yaml.Node
	err := yaml.Unmarshal([]byte(strings.Join(front, "")), &doc)
	if err != nil {
		if fixed, lines := dedentKeys(front); len(lines) > 0 {
			for _, l := range lines {
				key, _, _ := strings.Cut(strings.TrimSpace(fixed[l-1]), ":")
				p.recoverf(l+p.offset, "%q is indented under the line above, so YAML would read it as part of that value; it is read as the key %s; remove the indentation", strings.TrimSpace(front[l-1]), key)
			}
			front = fixed
			p.src = fixed
			var again yaml.Node
			if err = yaml.Unmarshal([]byte(strings.Join(fixed, "")), &again); err == nil {
				doc = again
			}
		}
	}
	if err != nil {
		if fixed, fixes := quotePlainValues(front); len(fixes) > 0 {
			var again yaml.Node
			if yaml.Unmarshal([]byte(strings.Join(fixed, "")), &again) == nil {
				for _, f := range fixes {
					p.recoverf(f.line+p.offset, "the value of %q is not valid YAML as written (an unquoted ': ' or text after a closing bracket); it is read as the text %s; quote it: %s: %s", f.key, f.quoted, f.key, f.quoted)
				}
				p.src, doc, err = fixed, again, nil
			}
		}
	}
	if err != nil {
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
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0]
	}
	return nil
}

// dedentKeys returns front with each indented line that starts with a
// known key (`  description: ...`) right after a top-level `key: value`
// line moved to the top level, and the 1-based lines it moved. A plain
// value cannot have children, so YAML would fail there, and folding the
// line into the value above would merge the description into the name.
func dedentKeys(front []string) ([]string, []int) {
	out := append([]string(nil), front...)
	var moved []int
	prevPlain := false // the last non-blank line is a top-level key with a plain value
	for i, raw := range out {
		line := strings.TrimRight(raw, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			t := strings.TrimSpace(line)
			key, _, ok := strings.Cut(t, ":")
			if ok && prevPlain && slices.Contains(knownKeys, key) && (len(t) == len(key)+1 || t[len(key)+1] == ' ') {
				out[i] = t + raw[len(line):]
				moved = append(moved, i+1)
				continue // prevPlain carries on from the moved line
			}
			prevPlain = false
			continue
		}
		m := topKeyRE.FindStringSubmatch(line)
		prevPlain = m != nil && !strings.ContainsAny(m[2][:1], "|>&*!#{[")
	}
	return out, moved
}

// quoteFix is one value quotePlainValues quoted.
type quoteFix struct {
	line   int // 1-based line in the front matter
	key    string
	quoted string
}

var topKeyRE = lazyregexp.New(`^([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:[ \t]+(\S.*?)[ \t]*$`)

// quotePlainValues returns front with every top-level `key: value` whose
// value does not parse on its own replaced by `key: "value"`. A plain value
// continued on more-indented lines is folded into one line, as YAML folds
// it, and the continuation lines are left empty so that line numbers stay.
func quotePlainValues(front []string) ([]string, []quoteFix) {
	out := append([]string(nil), front...)
	var fixes []quoteFix
	for i := 0; i < len(out); i++ {
		line := strings.TrimRight(out[i], "\r\n")
		m := topKeyRE.FindStringSubmatch(line)
		if m == nil || strings.ContainsAny(m[2][:1], "|>&*!#{") {
			continue // block scalars, anchors, aliases, tags and mappings keep their structure
		}
		j := i + 1
		parts := []string{m[2]}
		for ; j < len(out); j++ {
			l := strings.TrimRight(out[j], "\r\n")
			if strings.TrimSpace(l) == "" || (l[0] != ' ' && l[0] != '\t') {
				break
			}
			parts = append(parts, strings.TrimSpace(l))
		}
		var probe yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(out[i:j], "")), &probe) == nil {
			continue
		}
		quoted := strconv.Quote(strings.Join(parts, " "))
		nl := out[i][len(line):]
		if nl == "" {
			nl = "\n"
		}
		out[i] = m[1] + ": " + quoted + nl
		for k := i + 1; k < j; k++ {
			out[k] = "\n"
		}
		fixes = append(fixes, quoteFix{line: i + 1, key: m[1], quoted: quoted})
		i = j - 1
	}
	return out, fixes
}

// checkTree reports duplicate keys at any depth, naming both lines, and
// refuses nesting deeper than MaxDepth. A duplicate is an error, never
// "last one wins": a second permissions.env must not widen the first.
func (p *parser) checkTree(n *yaml.Node, at string, depth int) bool {
	if depth > MaxDepth {
		p.errorf(p.line(n), "the front matter nests more than %d levels deep here; flatten it (SKILL.md fields need two or three levels)", MaxDepth)
		return false
	}
	ok := true
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			full := k.Value
			if at != "" {
				full = at + "." + k.Value
			}
			if k.Kind == yaml.ScalarNode {
				if prev, dup := seen[k.Value]; dup {
					where := fmt.Sprintf("on lines %d and %d", prev, p.line(k))
					if prev == p.line(k) {
						where = fmt.Sprintf("twice on line %d", prev)
					}
					p.errorf(p.line(k), "key %q appears twice (%s); keep one, since YAML would silently use the last", full, where)
				} else {
					seen[k.Value] = p.line(k)
				}
			}
			ok = p.checkTree(k, at, depth+1) && p.checkTree(v, full, depth+1) && ok
			if !ok && len(p.errs) > 0 && strings.Contains(p.errs[len(p.errs)-1].Message, "levels deep") {
				return false
			}
		}
	case yaml.SequenceNode, yaml.DocumentNode:
		for _, c := range n.Content {
			if !p.checkTree(c, at, depth+1) {
				return false
			}
		}
	}
	return ok
}

// nameHint is what to suggest for 'name:' in a message.
func nameHint(folder string) string {
	if c := RecoverName(folder); c != "" {
		return c
	}
	return "my-skill"
}

// validate fills the name and description a skill left out (SPEC §3) and
// checks the fields that need the whole manifest. bodyLine is the file line
// where the body starts.
func (p *parser) validate(m *Manifest, nameLine, descLine, bodyLine int) {
	switch {
	case p.badType["name"]:
	case nameLine == 0 || strings.TrimSpace(m.Name) == "":
		c := RecoverName(p.folder)
		if _, err := Canonical(c); c == "" || err != nil {
			p.errorf(max(nameLine, 1), "the skill has no 'name' and its folder name %q cannot stand in for one; add 'name: my-skill' to the front matter", p.folder)
			break
		}
		m.Name = c
		p.recoverf(max(nameLine, 1), "no 'name' given, so the folder name %q is used; add 'name: %s'", c, c)
	case strings.ContainsAny(m.Name, "/\\\x00") || strings.Contains(m.Name, ".."):
		p.errorf(nameLine, "name %q contains '/', '\\', '..' or NUL, which could name a path; use letters, digits, '-' or '_'", m.Name)
	default:
		if _, err := Canonical(m.Name); err == nil {
			break
		}
		c := RecoverName(m.Name)
		if c == "" {
			c = RecoverName(p.folder)
		}
		if _, err := Canonical(c); c == "" || err != nil {
			p.errorf(nameLine, "name %q cannot be made into a skill name; use 1-%d letters, digits, '-' or '_'", m.Name, MaxNameLen)
			break
		}
		m.DisplayName, m.Name = m.Name, c
		p.recoverf(nameLine, "name %q is not a plain skill name; it is shown as written and installed as %q; write 'name: %s'", m.DisplayName, c, c)
	}
	if !p.badType["description"] && strings.TrimSpace(m.Description) == "" {
		para, line := firstParagraph(m.Body, bodyLine)
		if para == "" {
			p.errorf(max(descLine, 1), "the skill has neither a description nor a body; add 'description: what the skill does and when to use it' to the front matter")
		} else {
			m.Description = para
			p.recoverf(max(descLine, 1), "no 'description' given, so the first paragraph of the body (line %d) is used; add 'description: what the skill does and when to use it'", line)
		}
	}
	if n := utf8.RuneCountInString(m.Description); n > MaxDescriptionLen {
		p.warnf(max(descLine, 1), "description is %d characters, over the recommended %d; consider moving detail into the body", n, MaxDescriptionLen)
	}
	if m.Version != "" {
		if _, err := semver.NewVersion(m.Version); err != nil {
			// Only shown, never compared: a skill is not refused for it.
			p.warnf(p.keyLine("version"), "version %q is not a semantic version; it is shown as written; use a form like 1.2.0", m.Version)
		}
	}
	for _, f := range []struct{ key, val string }{{"min_agent_version", m.MinAgentVersion}, {"max_agent_version", m.MaxAgentVersion}} {
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

// firstParagraph is the first paragraph of a markdown body, skipping
// headings, with its file line. bodyLine is the file line of body's start.
func firstParagraph(body string, bodyLine int) (string, int) {
	var para []string
	start := 0
	inFence := false
	for i, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			if len(para) > 0 {
				break
			}
			continue
		}
		switch {
		case inFence:
		case t == "":
			if len(para) > 0 {
				return strings.Join(para, " "), start
			}
		case strings.HasPrefix(t, "#") || strings.HasPrefix(t, "<!--"):
			if len(para) > 0 {
				return strings.Join(para, " "), start
			}
		default:
			if len(para) == 0 {
				start = bodyLine + i
			}
			para = append(para, t)
		}
	}
	return strings.Join(para, " "), start
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
	if v.Kind == yaml.ScalarNode {
		if v.Tag != "!!str" {
			// version: 1.0, a number or a bool: the text as written.
			p.recoverf(p.line(v), "%s: YAML reads %s as a %s; it is used as the text %q; quote it: %s: %q", key, v.Value, tagName(v.Tag), v.Value, lastKey(key), v.Value)
		}
		return v.Value
	}
	if v.Kind != yaml.SequenceNode && v.Kind != yaml.MappingNode {
		p.errorf(p.line(v), "%s must be a string, not a %s", key, kindName(v))
		if p.badType == nil {
			p.badType = map[string]bool{}
		}
		p.badType[key] = true
		return ""
	}
	// argument-hint: [pr-number] is a YAML list; Claude Code shows it as written.
	raw := p.rawText(v)
	p.recoverf(p.line(v), "%s must be a string, not a %s; it is used as the text %s, as written; quote it: %s: %q", key, kindName(v), raw, lastKey(key), raw)
	return raw
}

func lastKey(key string) string { return key[strings.LastIndex(key, ".")+1:] }

func tagName(tag string) string {
	switch tag {
	case "!!int", "!!float":
		return "number"
	case "!!bool":
		return "boolean"
	case "!!timestamp":
		return "date"
	}
	return "value tagged " + tag
}

// rawText is a flow list or mapping as the author wrote it on its line, or
// re-encoded in flow style when it spans lines.
func (p *parser) rawText(v *yaml.Node) string {
	closer := "]"
	if v.Kind == yaml.MappingNode {
		closer = "}"
	}
	if v.Style&yaml.FlowStyle != 0 && v.Line-1 < len(p.src) && v.Line >= 1 {
		rs := []rune(strings.TrimRight(p.src[v.Line-1], "\r\n"))
		if c := v.Column - 1; c >= 0 && c < len(rs) {
			if t := strings.TrimSpace(string(rs[c:])); strings.HasSuffix(t, closer) {
				return t
			}
		}
	}
	c := *v
	c.Style |= yaml.FlowStyle
	out, err := yaml.Marshal(&c)
	if err != nil {
		return v.Value
	}
	return strings.TrimSpace(string(out))
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
	if v.Kind == yaml.ScalarNode {
		// YAML 1.1 booleans, which YAML 1.2 (and so yaml.v3) reads as text.
		var b, ok bool
		switch strings.ToLower(v.Value) {
		case "yes", "on", "true":
			b, ok = true, true
		case "no", "off", "false":
			b, ok = false, true
		}
		if ok {
			p.recoverf(p.line(v), "%s: %q is read as %t; write %s: %t", key, v.Value, b, key, b)
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
	p.checkPlugin(p.line(v), ps, "plugin sets both build and command; keep one")
	return ps
}

// checkPlugin checks a plugin given either way (plugin: or metadata).
func (p *parser) checkPlugin(line int, ps *PluginSpec, both string) {
	switch {
	case ps.Build != "" && ps.Command != "":
		p.errorf(line, "%s", both)
	case ps.Build == "" && ps.Command == "":
		p.errorf(line, "plugin needs build (a Go main package, for example ./plugin) or command (a prebuilt executable in the skill)")
	}
	for _, f := range []string{ps.Build, ps.Command} {
		if f != "" && !InsideRel(f) {
			p.errorf(line, "plugin path %q must be relative and stay inside the skill folder", f)
		}
	}
}

// checkScripts checks a scripts list given either way; key names it.
func (p *parser) checkScripts(key string, line int, scripts []string) {
	for _, s := range scripts {
		if s == "" || strings.ContainsAny(s, `/\`) || strings.Contains(s, "..") {
			p.errorf(line, "%s: %q is not a script name; list names like 'status' or 'status.py' from scripts/", key, s)
		}
	}
}

// checkIgnore checks a scripts_ignore list given either way.
func (p *parser) checkIgnore(key string, line int, globs []string) {
	for _, g := range globs {
		if _, err := path.Match(g, "x"); err != nil {
			p.errorf(line, "%s: %q is not a valid glob: %v", key, g, err)
		}
	}
}

// checkEnv checks a permissions.env list given either way.
func (p *parser) checkEnv(key string, line int, env []string) {
	for _, e := range env {
		if e == "" || strings.ContainsAny(e, "= \t\n") {
			p.errorf(line, "%s: %q is not an environment variable name", key, e)
		}
		if e == "*" {
			p.warnf(line, "%s: %s", key, broadEnv)
		}
	}
}

// InsideRel reports whether a slash or OS separated relative path stays
// inside its base directory.
func InsideRel(p string) bool {
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
			p.checkEnv("permissions.env", p.line(val), perms.Env)
			p.noteTopPerm("permissions.env", p.line(k))
		case "fs":
			perms.FS = p.fsPermissions(val)
		case "network":
			perms.Network = p.strList("permissions.network", val, false)
			p.noteTopPerm("permissions.network", p.line(k))
			p.checkNetwork("permissions.network", p.line(val), perms.Network)
		default:
			p.warnf(p.line(k), "unknown key %q under permissions is ignored; only env, fs and network are supported", k.Value)
		}
	}
	return perms
}

// fsPermissions parses permissions.fs: {read: [paths], write: [paths]}.
func (p *parser) fsPermissions(v *yaml.Node) FSPermissions {
	var fs FSPermissions
	if isNull(v) {
		return fs
	}
	if v.Kind != yaml.MappingNode {
		p.errorf(p.line(v), "permissions.fs must be a mapping, for example 'fs: {read: [~/data], write: [$WORKSPACE/out]}'")
		return fs
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		var list *[]string
		switch k.Value {
		case "read":
			list = &fs.Read
		case "write":
			list = &fs.Write
		default:
			p.warnf(p.line(k), "unknown key %q under permissions.fs is ignored; only read and write are supported", k.Value)
			continue
		}
		*list = p.strList("permissions.fs."+k.Value, val, false)
		p.noteTopPerm("permissions.fs."+k.Value, p.line(k))
		p.checkFS("permissions.fs."+k.Value, p.line(val), *list)
	}
	return fs
}

// checkFS checks a permissions.fs.read or .write list given either way:
// each path has an allowed form and no ".." (a declared path is resolved
// once, at install), and one that opens a whole file system or home
// folder is a warning (broadFS).
func (p *parser) checkFS(key string, line int, paths []string) {
	for _, path := range paths {
		switch {
		case !fsPathOK(path):
			p.errorf(line, "%s: %q is not an absolute path or one that starts with ~, $WORKSPACE or $TMP", key, path)
		case hasDotDot(path):
			p.errorf(line, "%s: %q holds \"..\"; a declared path means one folder, fixed when the skill is installed: write it without \"..\"", key, path)
		default:
			if msg := broadFS(strings.HasSuffix(key, "write"), path); msg != "" {
				p.warnf(line, "%s: %s", key, msg)
			}
		}
	}
}

// checkNetwork checks a permissions.network list given either way.
func (p *parser) checkNetwork(key string, line int, hosts []string) {
	for _, n := range hosts {
		if err := checkHostPort(n); err != nil {
			p.errorf(line, "%s: %v", key, err)
		} else if n == "*" {
			p.warnf(line, "%s: %s", key, broadNetwork)
		}
	}
}

func hasDotDot(path string) bool {
	return slices.Contains(strings.FieldsFunc(path, func(r rune) bool { return r == '/' || r == '\\' }), "..")
}

// broadFS is the warning for a permissions.fs path that opens a whole
// file system or home folder (write says which list), or "".
func broadFS(write bool, p string) string {
	verb := "read"
	if write {
		verb = "change"
	}
	switch path.Clean(p) {
	case "/":
		return fmt.Sprintf("%q lets this skill's code %s every file the user can; list the folders it needs, such as $WORKSPACE/data", p, verb)
	case "~":
		return fmt.Sprintf("%q is the whole home folder: this skill's code may %s every file there, SSH keys and cloud credentials included; list the folders it needs, such as ~/data", p, verb)
	}
	return ""
}

// broadNetwork is the warning for permissions.network: ["*"].
const broadNetwork = `"*" lets this skill's code reach any host, the local network and cloud metadata addresses included; list the host:port it needs, such as api.example.com:443`

// broadEnv is the warning for permissions.env: ["*"].
const broadEnv = `"*" passes every environment variable but known secrets to this skill's scripts and plugin; list the names it needs, such as [GITHUB_TOKEN] or [MYAPP_*]`

// Broad lists the permissions of p that reach far beyond the skill's own
// folder: every environment variable, a whole file system or home folder,
// any host. Each is allowed, and each is a warning when SKILL.md is read;
// add and trust show them with the rest of p before the skill runs.
func Broad(p Permissions) []string {
	var out []string
	if slices.Contains(p.Env, "*") {
		out = append(out, "permissions.env: "+broadEnv)
	}
	for _, l := range []struct {
		key   string
		paths []string
	}{{"permissions.fs.read", p.FS.Read}, {"permissions.fs.write", p.FS.Write}} {
		for _, path := range l.paths {
			if msg := broadFS(l.key == "permissions.fs.write", path); msg != "" {
				out = append(out, l.key+": "+msg)
			}
		}
	}
	if slices.Contains(p.Network, "*") {
		out = append(out, "permissions.network: "+broadNetwork)
	}
	return out
}

// fsPathOK accepts the path forms permissions.fs allows.
func fsPathOK(path string) bool {
	if strings.ContainsRune(path, 0) {
		return false
	}
	for _, prefix := range []string{"~", "$WORKSPACE", "$TMP"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return strings.HasPrefix(path, "/")
}

// checkHostPort accepts "*" or host:port.
func checkHostPort(s string) error {
	if s == "*" {
		return nil
	}
	host, port, ok := splitHostPort(s)
	if !ok || host == "" || strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("%q is not host:port or \"*\", for example api.example.com:443", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q has no port between 1 and 65535", s)
	}
	return nil
}

// splitHostPort splits host:port or [v6]:port as net.SplitHostPort does
// (this package does no I/O, so it does not import net).
func splitHostPort(s string) (host, port string, ok bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", false
	}
	host, port = s[:i], s[i+1:]
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", "", false
		}
		host = host[1 : len(host)-1]
	} else if strings.ContainsAny(host, ":[]") {
		return "", "", false
	}
	return host, port, true
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

// Limits of the Agent Skills specification, checked by CheckStrict.
const (
	maxStrictCompatibility = 500
)

// CheckStrict checks a parsed manifest against the Agent Skills
// specification, for authors who publish (`agent skill validate --strict`):
// only its six top-level fields; the name, after NFKC, is 1-64 lowercase
// letters and digits with single inner hyphens and equals folder; the
// description has 1-1024 characters; compatibility 1-500; metadata maps
// strings to strings; and no recovery was needed (each recovered warning
// in warns comes back as a problem). file names the SKILL.md in messages.
//
// It is at least as strict as the reference validator (npm skills-ref),
// which the agreement test runs on the same fixtures; where it is
// stricter (skills-ref stringifies a nested metadata value, takes a number
// for a description) the test lists the case.
func CheckStrict(file, folder string, m *Manifest, warns []Problem) []Problem {
	var out []Problem
	add := func(line int, format string, args ...any) {
		out = append(out, Problem{File: file, Line: line, Message: "Agent Skills specification: " + fmt.Sprintf(format, args...)})
	}
	nameLine := m.KeyLines["name"]
	for _, w := range warns {
		// A name this host rewrote for itself (DisplayName keeps it) may
		// still be the specification's (Unicode letters): strictName
		// judges it instead.
		if w.Recovered && !(m.DisplayName != "" && w.Line == nameLine) {
			add(w.Line, "%s", w.Message)
		}
	}
	for _, k := range m.Keys {
		if slices.Contains(SpecFields, k) {
			continue
		}
		line := m.KeyLines[k]
		if mk := MetadataKeys(k); len(mk) > 0 {
			add(line, "field %q is not one of the six it allows (%s); write it under metadata as %s (a string)", k, strings.Join(SpecFields, ", "), strings.Join(mk, " or "))
		} else {
			add(line, "field %q is not one of the six it allows (%s); agents that follow it reject the skill: move it under metadata as a string or delete it", k, strings.Join(SpecFields, ", "))
		}
	}
	name := m.Name
	if m.DisplayName != "" {
		name = m.DisplayName
	}
	for _, msg := range strictName(name, folder) {
		add(nameLine, "%s", msg)
	}
	if n := utf8.RuneCountInString(m.Description); n < 1 || n > MaxDescriptionLen {
		add(m.KeyLines["description"], "description is %d characters; it must have 1-%d", n, MaxDescriptionLen)
	}
	if _, given := m.KeyLines["compatibility"]; given {
		if n := utf8.RuneCountInString(m.Compatibility); n < 1 || n > maxStrictCompatibility {
			add(m.KeyLines["compatibility"], "compatibility is %d characters; it must have 1-%d", n, maxStrictCompatibility)
		}
	}
	keys := make([]string, 0, len(m.Metadata))
	for k := range m.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := m.Metadata[k].(string); !ok {
			add(m.KeyLines["metadata"], "metadata.%s must be a string; quote it", k)
		}
	}
	SortProblems(out)
	return out
}

// strictName applies the specification's name rule: after NFKC, 1-64
// characters, lowercase, letters and digits with single hyphens inside,
// equal to the folder's name (also after NFKC). Letters are those the
// reference validator knows (Latin with its extensions, Cyrillic, CJK and
// combining marks), so that a name it rejects is rejected here too.
func strictName(name, folder string) []string {
	n := norm.NFKC.String(strings.TrimSpace(name))
	if n == "" {
		return []string{"name must be a non-empty string"}
	}
	var out []string
	if c := utf8.RuneCountInString(n); c > MaxNameLen {
		out = append(out, fmt.Sprintf("name %q is %d characters; at most %d are allowed", n, c, MaxNameLen))
	}
	if n != strings.ToLower(n) {
		out = append(out, fmt.Sprintf("name %q must be lowercase: write %q", n, strings.ToLower(n)))
	}
	if strings.HasPrefix(n, "-") || strings.HasSuffix(n, "-") || strings.Contains(n, "--") {
		out = append(out, fmt.Sprintf("name %q must not start or end with a hyphen or hold two in a row", n))
	}
	if strings.IndexFunc(n, func(r rune) bool { return r != '-' && !specLetter(r) }) >= 0 {
		out = append(out, fmt.Sprintf("name %q may hold only letters, digits and hyphens (no '_', spaces or dots)", n))
	}
	if folder != "" && norm.NFKC.String(folder) != n {
		out = append(out, fmt.Sprintf("name %q must equal its folder name %q; rename one of them", n, folder))
	}
	return out
}

// specLetter reports whether the reference validator counts r as a letter
// or digit of a name.
func specLetter(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	case r >= 0x00c0 && r <= 0x024f: // Latin-1 letters and Latin Extended-A/B
		return unicode.IsLetter(r)
	case r >= 0x0300 && r <= 0x036f, // combining diacritical marks
		r >= 0x0400 && r <= 0x04ff, // Cyrillic
		r >= 0x3400 && r <= 0x4dbf, // CJK Extension A
		r >= 0x4e00 && r <= 0x9fff: // CJK Unified Ideographs
		return true
	}
	return false
}
