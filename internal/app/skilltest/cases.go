package skilltest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrCases: a tests/*.yaml file that cannot be read as cases.
var ErrCases = errors.New("invalid test cases")

// Dir is the folder of a skill that holds its cases.
const Dir = "tests"

// maxCaseFile bounds one tests/*.yaml file: cases are small, and the
// parser must not be handed a file that eats the memory.
const maxCaseFile = 1 << 20

// Case is one call and what it must give.
type Case struct {
	Name string `json:"name"`
	File string `json:"file"` // tests/x.yaml
	Line int    `json:"line"`
	// Tool is a tool's name (or skill.tool); Script a script of the skill
	// under test, called as script_run.
	Tool   string `json:"tool,omitempty"`
	Script string `json:"script,omitempty"`
	// Args is the tool's JSON object; for a script, the script_run
	// arguments built from the case's argument list.
	Args   json.RawMessage `json:"args"`
	Expect Expect          `json:"expect"`
}

// Expect is what a case checks. The zero value expects success.
type Expect struct {
	// Success is whether the call must succeed; an Error implies false.
	Success bool `json:"success"`
	// Error is the error code the call must fail with.
	Error string `json:"error,omitempty"`
	// Message must match the outcome's message (a regular expression).
	Message string      `json:"message,omitempty"`
	JSON    []PathCheck `json:"json,omitempty"`
	Files   []FileCheck `json:"files,omitempty"`
	// Denied says the case means to be refused by the sandbox: its
	// denials are then expected rather than a failure.
	Denied bool `json:"denied,omitempty"`

	message *regexp.Regexp
}

// PathCheck is one expectation on a JSON path of the result (gjson
// syntax: a.b, items.0.name, items.#).
type PathCheck struct {
	Path string `json:"path"`
	// Equals is the value as JSON; nil when the check has none.
	Equals   json.RawMessage `json:"equals,omitempty"`
	Contains *string         `json:"contains,omitempty"`
	Matches  string          `json:"matches,omitempty"`
	// Absent: the path must not exist.
	Absent bool `json:"absent,omitempty"`

	matches *regexp.Regexp
}

// FileCheck is one expectation on a file the call wrote, by a path
// inside the scratch workspace.
type FileCheck struct {
	Path     string  `json:"path"`
	Absent   bool    `json:"absent,omitempty"`
	Equals   *string `json:"equals,omitempty"`
	Contains *string `json:"contains,omitempty"`
	Matches  string  `json:"matches,omitempty"`

	matches *regexp.Regexp
}

// The YAML shapes; decoded one case at a time so that an error names
// its line.
type yamlFile struct {
	Cases []yaml.Node `yaml:"cases"`
}

type yamlCase struct {
	Name   string     `yaml:"name"`
	Tool   string     `yaml:"tool"`
	Script string     `yaml:"script"`
	Args   yaml.Node  `yaml:"args"`
	Expect yamlExpect `yaml:"expect"`
}

type yamlExpect struct {
	Success *bool       `yaml:"success"`
	Error   string      `yaml:"error"`
	Message string      `yaml:"message"`
	JSON    []yamlPath  `yaml:"json"`
	Files   []FileCheck `yaml:"files"`
	Denied  bool        `yaml:"denied"`
}

type yamlPath struct {
	Path     string    `yaml:"path"`
	Equals   yaml.Node `yaml:"equals"`
	Contains *string   `yaml:"contains"`
	Matches  string    `yaml:"matches"`
	Absent   bool      `yaml:"absent"`
}

// UnmarshalYAML reads a FileCheck (its fields are exported for JSON).
func (f *FileCheck) UnmarshalYAML(n *yaml.Node) error {
	var y struct {
		Path     string  `yaml:"path"`
		Absent   bool    `yaml:"absent"`
		Equals   *string `yaml:"equals"`
		Contains *string `yaml:"contains"`
		Matches  string  `yaml:"matches"`
	}
	if err := n.Decode(&y); err != nil {
		return err
	}
	*f = FileCheck{Path: y.Path, Absent: y.Absent, Equals: y.Equals, Contains: y.Contains, Matches: y.Matches}
	return nil
}

// Load reads every tests/*.yaml (and *.yml) of the skill folder dir, in
// name order. A skill without tests/ has no cases.
func Load(dir string) ([]Case, error) {
	var names []string
	for _, pat := range []string{"*.yaml", "*.yml"} {
		m, err := filepath.Glob(filepath.Join(dir, Dir, pat))
		if err != nil {
			return nil, err
		}
		names = append(names, m...)
	}
	slices.Sort(names)
	var all []Case
	for _, p := range names {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read cases: %w", err)
		}
		data, err := io.ReadAll(io.LimitReader(f, maxCaseFile+1))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read cases: %w", err)
		}
		rel := Dir + "/" + filepath.Base(p)
		if len(data) > maxCaseFile {
			return nil, fmt.Errorf("%s: %w: larger than %d bytes", rel, ErrCases, maxCaseFile)
		}
		cs, err := Parse(data, rel)
		if err != nil {
			return nil, err
		}
		all = append(all, cs...)
	}
	if err := uniqueNames(all); err != nil {
		return nil, err
	}
	return all, nil
}

func uniqueNames(cs []Case) error {
	seen := map[string]Case{}
	for _, c := range cs {
		if prev, ok := seen[c.Name]; ok {
			return fmt.Errorf("%s:%d: %w: case %q is also at %s:%d; give each case its own name", c.File, c.Line, ErrCases, c.Name, prev.File, prev.Line)
		}
		seen[c.Name] = c
	}
	return nil
}

// Parse reads the cases of one file, named file in errors.
func Parse(data []byte, file string) ([]Case, error) {
	var doc yamlFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w: %v", file, ErrCases, err)
	}
	out := make([]Case, 0, len(doc.Cases))
	for i := range doc.Cases {
		n := &doc.Cases[i]
		c, err := parseCase(n, file)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w: %v", file, n.Line, ErrCases, err)
		}
		out = append(out, c)
	}
	if err := uniqueNames(out); err != nil {
		return nil, err
	}
	return out, nil
}

func parseCase(n *yaml.Node, file string) (Case, error) {
	var y yamlCase
	if err := strictDecode(n, &y); err != nil {
		return Case{}, err
	}
	c := Case{Name: strings.TrimSpace(y.Name), File: file, Line: n.Line, Tool: y.Tool, Script: y.Script}
	if c.Name == "" {
		return c, errors.New("a case needs a name")
	}
	switch {
	case (y.Tool == "") == (y.Script == ""):
		return c, fmt.Errorf("case %q: give exactly one of tool: and script:", c.Name)
	case y.Tool != "":
		args, err := toolArgs(&y.Args)
		if err != nil {
			return c, fmt.Errorf("case %q: args: %w", c.Name, err)
		}
		c.Args = args
	default:
		argv, err := scriptArgs(&y.Args)
		if err != nil {
			return c, fmt.Errorf("case %q: args: %w", c.Name, err)
		}
		c.Args, _ = json.Marshal(argv)
	}
	e, err := parseExpect(y.Expect)
	if err != nil {
		return c, fmt.Errorf("case %q: expect: %w", c.Name, err)
	}
	c.Expect = e
	return c, nil
}

// strictDecode decodes n refusing unknown keys, as the file's decoder
// does: a misspelt expectation must not pass silently.
func strictDecode(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

func toolArgs(n *yaml.Node) (json.RawMessage, error) {
	if n.Kind == 0 {
		return json.RawMessage("{}"), nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errors.New("a tool's args are a mapping (its JSON object)")
	}
	v, err := nodeJSON(n)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func scriptArgs(n *yaml.Node) ([]string, error) {
	if n.Kind == 0 {
		return []string{}, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("a script's args are a list of strings (its command line)")
	}
	out := make([]string, 0, len(n.Content))
	for _, a := range n.Content {
		if a.Kind != yaml.ScalarNode {
			return nil, errors.New("a script's args are a list of strings (its command line)")
		}
		out = append(out, a.Value)
	}
	return out, nil
}

// nodeJSON is a YAML value as JSON; maps must have string keys.
func nodeJSON(n *yaml.Node) (json.RawMessage, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("not a JSON value: %w", err)
	}
	return b, nil
}

func parseExpect(y yamlExpect) (Expect, error) {
	e := Expect{Error: y.Error, Message: y.Message, Files: y.Files, Denied: y.Denied, Success: y.Error == ""}
	if y.Success != nil {
		if *y.Success && y.Error != "" {
			return e, errors.New("success: true with an error: code; a call that fails has no success")
		}
		e.Success = *y.Success
	}
	var err error
	if e.Message != "" {
		if e.message, err = regexp.Compile(e.Message); err != nil {
			return e, fmt.Errorf("message: %w", err)
		}
	}
	for _, p := range y.JSON {
		pc := PathCheck{Path: p.Path, Contains: p.Contains, Matches: p.Matches, Absent: p.Absent}
		if strings.TrimSpace(p.Path) == "" {
			return e, errors.New("json: each check needs a path")
		}
		if p.Equals.Kind != 0 {
			if pc.Equals, err = nodeJSON(&p.Equals); err != nil {
				return e, fmt.Errorf("json %s: equals: %w", p.Path, err)
			}
		}
		if pc.Matches != "" {
			if pc.matches, err = regexp.Compile(pc.Matches); err != nil {
				return e, fmt.Errorf("json %s: matches: %w", p.Path, err)
			}
		}
		if pc.Equals == nil && pc.Contains == nil && pc.Matches == "" && !pc.Absent {
			return e, fmt.Errorf("json %s: say what it must hold (equals, contains, matches or absent)", p.Path)
		}
		e.JSON = append(e.JSON, pc)
	}
	for i := range e.Files {
		f := &e.Files[i]
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || strings.Contains(f.Path, "\\") {
			return e, fmt.Errorf("files: %q is not a path inside the scratch workspace", f.Path)
		}
		if f.Matches != "" {
			if f.matches, err = regexp.Compile(f.Matches); err != nil {
				return e, fmt.Errorf("files %s: matches: %w", f.Path, err)
			}
		}
	}
	return e, nil
}
