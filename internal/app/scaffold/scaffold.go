package scaffold

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentskills/agent/internal/build/sdkmod"
)

// ErrNotEmpty: the target folder already holds files; init never
// overwrites an author's work.
var ErrNotEmpty = errors.New("folder is not empty")

// Options says what to scaffold besides SKILL.md.
type Options struct {
	Name   string // canonical skill name
	Plugin bool   // plugin/: a Go module requiring the SDK
	Script bool   // scripts/: a PEP 723 script
}

// Files returns the scaffold's files by slash path.
func Files(opts Options) (map[string]string, error) {
	files := map[string]string{"SKILL.md": manifest(opts)}
	if opts.Script {
		files["scripts/"+scriptName] = script
	}
	if opts.Plugin {
		mod, err := sdkmod.Embedded().PluginGoMod(ModulePath(opts.Name))
		if err != nil {
			return nil, err
		}
		sum, err := sdkmod.GoSum()
		if err != nil {
			return nil, err
		}
		files["plugin/go.mod"] = string(mod)
		files["plugin/go.sum"] = string(sum)
		files["plugin/main.go"] = pluginMain
		files["plugin/main_test.go"] = pluginTest
	}
	if t := tests(opts); t != "" {
		files["tests/"+opts.Name+".yaml"] = t
	}
	return files, nil
}

// ModulePath is the plugin's module path; the author renames it to the
// repository's path when publishing.
func ModulePath(name string) string { return "example.com/" + name + "/plugin" }

// Write creates dir (which must be missing or empty) with the scaffold and
// returns the files written, sorted.
func Write(dir string, opts Options) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	if len(des) > 0 {
		return nil, fmt.Errorf("init %s: %w", dir, ErrNotEmpty)
	}
	files, err := Files(opts)
	if err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("init %s: %w", dir, err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(n, ".py") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(files[n]), mode); err != nil {
			return nil, fmt.Errorf("init %s: %w", dir, err)
		}
	}
	return names, nil
}

const scriptName = "hello.py"

// tests are the cases `agent skill test` runs: one of each kind the
// scaffold has (a tool call, a script_run, a refusal's error code), each
// passing as scaffolded.
func tests(opts Options) string {
	if !opts.Plugin && !opts.Script {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Cases for `agent skill test`: each is called the way a model calls it.\n# Guide: docs/testing-skills.md.\ncases:\n")
	if opts.Plugin {
		b.WriteString(`  - name: greet by name
    tool: greet
    args: {name: Ada}
    expect:
      json:
        - {path: greeting, equals: "Hello, Ada!"}
`)
	}
	if opts.Script {
		b.WriteString(`  - name: hello script
    script: hello
    args: [Ada, --json]
    expect:
      json:
        - {path: greeting, equals: "Hello, Ada!"}
  - name: a missing script is not found
    script: no-such-script
    expect:
      error: not_found
`)
	}
	return b.String()
}

func manifest(opts Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nname: %s\n", opts.Name)
	fmt.Fprintf(&b, "description: >-\n  Says hello. Replace this with what the skill does and when to use it:\n  the model reads it to decide whether to load the skill.\n")
	// Only the six fields of the Agent Skills specification: this host's
	// own go under metadata as flat string keys (SPEC §3), so that agents
	// and validators that follow the specification accept the skill.
	b.WriteString("metadata:\n  agent.version: \"0.1.0\"\n")
	if opts.Plugin {
		b.WriteString("  agent.plugin.build: ./plugin\n")
	}
	b.WriteString("---\n\n")
	fmt.Fprintf(&b, "# %s\n\nInstructions for the model: what this skill is for and how to use its tools.\n", opts.Name)
	if opts.Plugin {
		b.WriteString("\nCall the `greet` tool with a name to greet someone.\n")
	}
	if opts.Script {
		fmt.Fprintf(&b, "\nRun `scripts/%s` (through `script_run`) for a greeting from Python; `--help` lists its options.\n", scriptName)
	}
	return b.String()
}

const script = `#!/usr/bin/env python3
# /// script
# requires-python = ">=3.8"
# dependencies = []
# ///
"""Say hello. Follows the script conventions: --help, and --json prints only JSON."""
import argparse
import json

parser = argparse.ArgumentParser(description="Say hello to someone.")
parser.add_argument("name", nargs="?", default="world", help="who to greet")
parser.add_argument("--json", action="store_true", help="print only JSON")
args = parser.parse_args()

greeting = "Hello, " + args.name + "!"
if args.json:
    print(json.dumps({"greeting": greeting}))
else:
    print(greeting)
`

const pluginMain = `// Command plugin serves this skill's tools to the agent host.
package main

import (
	"context"

	"github.com/agentskills/agent/sdk"
)

// greetIn is the tool's input; its JSON Schema comes from this struct.
// Fields without omitempty are required; description tags describe them.
type greetIn struct {
	Name string ` + "`" + `json:"name" description:"who to greet"` + "`" + `
}

func greet(ctx context.Context, in greetIn) (map[string]string, error) {
	return map[string]string{"greeting": "Hello, " + in.Name + "!"}, nil
}

func newSkill() sdk.Skill {
	return sdk.NewSkill(sdk.NewTool("greet", "Greet someone by name.", greet))
}

func main() { sdk.Serve(newSkill()) }
`

const pluginTest = `package main

import (
	"context"
	"testing"

	"github.com/agentskills/agent/sdk/sdktest"
)

func TestGreet(t *testing.T) {
	c := sdktest.Run(t, newSkill())
	res, err := c.Call(context.Background(), "greet", map[string]any{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Value), ` + "`" + `{"greeting":"Hello, Ada!"}` + "`" + `; got != want {
		t.Errorf("greet = %s, want %s", got, want)
	}
}
`
