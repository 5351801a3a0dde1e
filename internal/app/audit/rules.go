package audit

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// Rule is one rule as its YAML file gives it (Cisco skill-scanner's
// signature shape, plus check, where and examples).
type Rule struct {
	ID              string   `yaml:"id" json:"id"`
	Category        string   `yaml:"category" json:"category"`
	Severity        Severity `yaml:"severity" json:"severity"`
	Patterns        []string `yaml:"patterns,omitempty" json:"patterns,omitempty"`
	ExcludePatterns []string `yaml:"exclude_patterns,omitempty" json:"exclude_patterns,omitempty"`
	// FileTypes are the kinds of file the rule reads: markdown, python,
	// shell, javascript, text, or any (the default). Fenced code in
	// markdown is markdown (where: code selects it).
	FileTypes   []string `yaml:"file_types,omitempty" json:"file_types,omitempty"`
	Description string   `yaml:"description" json:"description"`
	Remediation string   `yaml:"remediation" json:"remediation"`
	// Check names a built-in check for what a pattern cannot say
	// (checks); patterns are then optional.
	Check string `yaml:"check,omitempty" json:"check,omitempty"`
	// Lines, for a check, are patterns a line must match for the check
	// to read it (a host in a line that runs a command, not in a link).
	Lines []string `yaml:"lines,omitempty" json:"lines,omitempty"`
	// Where limits a rule in markdown: prose (outside fenced code and
	// front matter), code (inside fences), frontmatter, or any.
	Where string `yaml:"where,omitempty" json:"where,omitempty"`
	// Disabled drops the rule: a user file disables a built-in rule by
	// giving its id with disabled: true.
	Disabled bool `yaml:"disabled,omitempty" json:"-"`
	// Examples are file contents the rule must fire on (match) and
	// must not (clean); the loader runs them.
	Examples Examples `yaml:"examples" json:"-"`

	// File is where the rule was read from.
	File string `yaml:"-" json:"file,omitempty"`
}

// Examples are a rule's samples.
type Examples struct {
	Match []string `yaml:"match"`
	Clean []string `yaml:"clean"`
}

var fileTypes = []string{"any", "markdown", "python", "shell", "javascript", "text"}

var wheres = []string{"", "any", "prose", "code", "frontmatter"}

// ParseRules reads one rule file: a YAML list of rules. It checks each
// rule's fields and compiles its patterns, but does not run its examples
// (Load does, once every file is read).
func ParseRules(file string, data []byte) ([]Rule, error) { return parseRules(file, data, true) }

// parseRules is ParseRules; without patterns it leaves the patterns'
// checks (each one compiled twice more) to compile: the built-in files,
// which TestBuiltinRulesPassTheirExamples reads through ParseRules.
func parseRules(file string, data []byte, patterns bool) ([]Rule, error) {
	var rules []Rule
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		if errors.Is(err, io.EOF) {
			// An empty file holds no rules.
			return nil, nil
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrRule, file, err)
	}
	seen := map[string]bool{}
	for i := range rules {
		r := &rules[i]
		r.File = file
		if err := r.check(patterns); err != nil {
			return nil, fmt.Errorf("%w: %s: rule %d (%s): %v", ErrRule, file, i+1, r.ID, err)
		}
		if seen[r.ID] {
			return nil, fmt.Errorf("%w: %s: rule %s is given twice", ErrRule, file, r.ID)
		}
		seen[r.ID] = true
	}
	return rules, nil
}

// check validates a parsed rule. A disabled rule needs only its id.
func (r *Rule) check(patterns bool) error {
	if r.ID == "" || len(r.ID) > 64 || strings.IndexFunc(r.ID, func(c rune) bool {
		return !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.')
	}) >= 0 {
		return fmt.Errorf("id %q: use 1-64 letters, digits, '_', '-' or '.'", r.ID)
	}
	if r.Disabled {
		return nil
	}
	if r.Severity == SeverityNone {
		return errors.New("severity: one of info, low, medium, high, critical")
	}
	if r.Category == "" || r.Description == "" || r.Remediation == "" {
		return errors.New("category, description and remediation are required")
	}
	if r.Check == "" && len(r.Patterns) == 0 {
		return errors.New("give patterns or a check")
	}
	if r.Check != "" {
		if _, ok := checks[r.Check]; !ok {
			return fmt.Errorf("unknown check %q (known: %s)", r.Check, strings.Join(checkNames(), ", "))
		}
	}
	for _, t := range r.FileTypes {
		if !slices.Contains(fileTypes, t) {
			return fmt.Errorf("file_types: unknown %q (known: %s)", t, strings.Join(fileTypes, ", "))
		}
	}
	if !slices.Contains(wheres, r.Where) {
		return fmt.Errorf("where: unknown %q (prose, code, frontmatter or any)", r.Where)
	}
	if len(r.Lines) > 0 && r.Check == "" {
		return errors.New("lines: goes with a check")
	}
	for _, p := range slices.Concat(r.Patterns, r.ExcludePatterns, r.Lines) {
		if !patterns {
			break
		}
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("pattern %q: %v", p, err)
		}
		if n := progSize(p); n > maxProg {
			return fmt.Errorf("pattern %q compiles to %d instructions (at most %d): counted repeats such as {500} make every audit slow", p, n, maxProg)
		}
	}
	if len(r.Examples.Match) == 0 || len(r.Examples.Clean) == 0 {
		return errors.New("examples: give at least one match and one clean sample")
	}
	return nil
}

// maxProg bounds a pattern's compiled size: Go's matcher is linear in the
// text, times the program's size, and a rule runs on every file.
const maxProg = 4000

func progSize(p string) int {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	return len(prog.Inst)
}

// Pack is the rule set a report was made with.
type Pack struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Digest is over every rule file read, built in and added, so that a
	// report says exactly which rules made it.
	Digest string `json:"digest"`
	Rules  int    `json:"rules"`
}

func (p Pack) String() string {
	return fmt.Sprintf("%s %s (%s, %d rules)", p.Name, p.Version, p.Digest, p.Rules)
}

// Rules is a loaded, checked rule set.
type Rules struct {
	Pack  Pack
	rules []*compiled
	pf    *prefilter
}

// List returns the rules, sorted by id.
func (rs *Rules) List() []Rule {
	out := make([]Rule, len(rs.rules))
	for i, c := range rs.rules {
		out[i] = c.Rule
	}
	return out
}

//go:embed rules/*.yaml
var builtinFS embed.FS

// packFile names the built-in pack and its version; the version changes
// with every change to the built-in rules.
const packFile = "rules/pack.yaml"

type packMeta struct {
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
}

// LoadOptions says where rules beyond the built-in ones are.
type LoadOptions struct {
	// Paths are rule files or folders of *.yaml / *.yml files
	// ($AGENT_HOME/audit/rules/ and audit.rules in config.yaml). A
	// folder that does not exist is skipped; a file that does not exist
	// is an error.
	Paths []string
	// Disable lists rule ids to drop (audit.disable in config.yaml).
	Disable []string
	// SelfTestBuiltin runs the built-in rules' examples too (tests).
	SelfTestBuiltin bool
}

var builtinOnce = sync.OnceValues(func() (*Rules, error) { return Load(LoadOptions{}) })

// Builtin returns the built-in rules, loaded once.
func Builtin() (*Rules, error) { return builtinOnce() }

type ruleFile struct {
	name string
	data []byte
}

// Load reads the built-in rules, then opts.Paths in order: a rule whose id
// is already known replaces it, disabled: true drops it. Every rule's
// examples are run (the built-in ones only with SelfTestBuiltin); one
// that fails is an error naming it.
func Load(opts LoadOptions) (*Rules, error) {
	var meta packMeta
	data, err := builtinFS.ReadFile(packFile)
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrRule, packFile, err)
	}
	files, err := builtinFiles()
	if err != nil {
		return nil, err
	}
	// The built-in rules' examples are run by the tests
	// (TestBuiltinRulesPassTheirExamples), not at every start: they are
	// part of this binary. A user's rules are checked here.
	builtin := map[string]bool{}
	for _, f := range files {
		builtin[f.name] = true
	}
	for _, p := range opts.Paths {
		more, err := userFiles(p)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	byID := map[string]Rule{}
	var order []string
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.Base(f.name), len(f.data))
		h.Write(f.data)
		rules, err := parseRules(f.name, f.data, !builtin[f.name])
		if err != nil {
			return nil, err
		}
		for _, r := range rules {
			if _, ok := byID[r.ID]; !ok {
				order = append(order, r.ID)
			}
			byID[r.ID] = r
		}
	}
	for _, id := range opts.Disable {
		fmt.Fprintf(h, "disable\x00%s\x00", id)
		if r, ok := byID[id]; ok {
			r.Disabled = true
			byID[id] = r
		}
	}
	rs := &Rules{}
	sort.Strings(order)
	for _, id := range order {
		r := byID[id]
		if r.Disabled {
			continue
		}
		rs.rules = append(rs.rules, compile(r))
	}
	rs.pf = newPrefilter(rs.rules)
	for _, c := range rs.rules {
		if builtin[c.File] && !opts.SelfTestBuiltin {
			continue
		}
		if err := c.selfTest(); err != nil {
			return nil, fmt.Errorf("%w: %s: rule %s: %v", ErrRule, c.File, c.ID, err)
		}
	}
	rs.Pack = Pack{Name: meta.Name, Version: meta.Version, Digest: "sha256:" + hex.EncodeToString(h.Sum(nil))[:12], Rules: len(rs.rules)}
	return rs, nil
}

func builtinFiles() ([]ruleFile, error) {
	names, err := fs.Glob(builtinFS, "rules/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []ruleFile
	for _, n := range names {
		if n == packFile {
			continue
		}
		data, err := builtinFS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, ruleFile{name: "builtin:" + strings.TrimPrefix(n, "rules/"), data: data})
	}
	return out, nil
}

// userFiles reads one rule file, or the *.yaml and *.yml files of a folder
// in name order.
func userFiles(p string) ([]ruleFile, error) {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") {
			return nil, fmt.Errorf("read audit rules: %w", err)
		}
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read audit rules: %w", err)
	}
	names := []string{p}
	if fi.IsDir() {
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("read audit rules: %w", err)
		}
		names = nil
		for _, e := range entries {
			n := e.Name()
			if e.Type().IsRegular() && (strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")) {
				names = append(names, filepath.Join(p, n))
			}
		}
	}
	var out []ruleFile
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read audit rules: %w", err)
		}
		out = append(out, ruleFile{name: n, data: data})
	}
	return out, nil
}
