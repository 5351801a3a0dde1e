package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseManifestOK(t *testing.T) {
	t.Parallel()
	src := `---
name: Kalshi_Markets
description: Trade on Kalshi prediction markets
version: 1.2.0
author: Ada
license: MIT
metadata:
  team: data
  n: 3
min_agent_version: 0.1.0
agent_version: ">=0.1, <1"
plugin:
  build: ./plugin
scripts: [status, report.py]
scripts_ignore: ["_*.py", "*_test.py"]
permissions:
  env: [KALSHI_*, HOME]
allowed-tools: Read, Bash(git add:*) Grep
argument-hint: "[ticker]"
disable-model-invocation: true
user-invocable: false
context: fork
agent: general
model: sonnet
homepage: https://example.com
---
# Kalshi

Use $ARGUMENTS.
`
	m, warns, err := ParseManifest("SKILL.md", []byte(src))
	if err != nil {
		t.Fatalf("ParseManifest: %v", err)
	}
	want := &Manifest{
		Name: "Kalshi_Markets", Description: "Trade on Kalshi prediction markets", Version: "1.2.0",
		Author: "Ada", License: "MIT", Metadata: map[string]any{"team": "data", "n": 3},
		MinAgentVersion: "0.1.0", AgentVersion: ">=0.1, <1",
		Plugin: &PluginSpec{Build: "./plugin"}, Scripts: []string{"status", "report.py"},
		ScriptsIgnore: []string{"_*.py", "*_test.py"}, Permissions: Permissions{Env: []string{"KALSHI_*", "HOME"}},
		AllowedTools: []string{"Read", "Bash(git add:*)", "Grep"}, ArgumentHint: "[ticker]",
		DisableModelInvocation: true, UserInvocable: new(bool), Context: "fork", Agent: "general", Model: "sonnet",
		Extra: map[string]any{"homepage": "https://example.com"},
		Body:  "# Kalshi\n\nUse $ARGUMENTS.\n",
	}
	if len(m.Keys) != 20 || m.Keys[19] != "homepage" || m.KeyLines["homepage"] != 25 {
		t.Errorf("Keys = %v, KeyLines = %v; want 20 keys in file order, homepage on line 25", m.Keys, m.KeyLines)
	}
	m.Keys, m.KeyLines = nil, nil
	if !reflect.DeepEqual(m, want) {
		t.Errorf("manifest =\n%#v\nwant\n%#v", m, want)
	}
	if len(warns) != 1 || warns[0].Line != 25 || !strings.Contains(warns[0].Message, `unknown key "homepage"`) {
		t.Errorf("warnings = %v; want one about homepage on line 25", warns)
	}
	if m.IsUserInvocable() {
		t.Error("IsUserInvocable = true; want false")
	}
}

// TestClaudeCodeFields: Claude Code's newer front matter fields are read,
// kept (the JSON of info --json) and never reported as unknown; the list
// fields take a string or a list, as allowed-tools does.
func TestClaudeCodeFields(t *testing.T) {
	t.Parallel()
	src := `---
name: review-pr
display-name: Review a Pull Request
description: Reviews a pull request.
when_to_use: When the user asks for a review of a PR.
paths: "src/**/*.go, *.md"
disallowed-tools: [Bash(rm:*), WebFetch]
shell: bash
effort: high
background: yes
hooks:
  PreToolUse:
    - matcher: Bash
      hooks:
        - type: command
          command: ./check.sh
---
Review it.
`
	m, warns, err := ParseManifest("review-pr/SKILL.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "review-pr" || m.DisplayName != "Review a Pull Request" || m.WhenToUse != "When the user asks for a review of a PR." ||
		!reflect.DeepEqual(m.Paths, []string{"src/**/*.go", "*.md"}) || !reflect.DeepEqual(m.DisallowedTools, []string{"Bash(rm:*)", "WebFetch"}) ||
		m.Shell != "bash" || m.Effort != "high" || !m.Background || len(m.Extra) != 0 {
		t.Fatalf("manifest = %+v", m)
	}
	// background: yes is YAML 1.1: read as true with the usual warning;
	// nothing else warns.
	if len(warns) != 1 || !strings.Contains(warns[0].Message, "background") {
		t.Fatalf("warnings = %v, want only the one about background: yes", warns)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"when_to_use":"When the user asks`, `"paths":["src/**/*.go","*.md"]`, `"hooks":{"PreToolUse":[{"hooks":[{"command":"./check.sh","type":"command"}],"matcher":"Bash"}]}`,
		`"shell":"bash"`, `"disallowed-tools":["Bash(rm:*)","WebFetch"]`, `"effort":"high"`, `"background":true`, `"display_name":"Review a Pull Request"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	if _, _, err := ParseManifest("x/SKILL.md", []byte("---\nname: x\ndescription: d\nhooks: [a]\n---\n")); err == nil || !strings.Contains(err.Error(), "hooks must be a mapping") {
		t.Fatalf("hooks as a list: err = %v", err)
	}
}

func TestParseManifestProblems(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", MaxDescriptionLen+1)
	tests := []struct {
		name     string
		src      string
		wantErr  []string // "line:substring"
		wantWarn []string
	}{
		{name: "no front matter", src: "# hello\n\nSays hi.\n", wantWarn: []string{"1:no YAML front matter", "1:no 'name' given", "1:first paragraph of the body (line 3)"}},
		{name: "empty file", src: "", wantErr: []string{"1:neither a description nor a body"}},
		{name: "bom skipped", src: "\ufeff---\nname: a\ndescription: b\n---\n"},
		{name: "bom without front matter", src: "\ufeffSays hi.\n", wantWarn: []string{"1:no YAML front matter", "1:no 'name' given", "1:first paragraph of the body (line 1)"}},
		{name: "unclosed", src: "---\nname: a\n", wantErr: []string{"1:never closed"}},
		{name: "invalid yaml", src: "---\nname: a\npermissions:\n  env: b: c\n---\n", wantErr: []string{"4:invalid YAML"}},
		{name: "unquoted colon", src: "---\nname: a\ndescription: b: c\n---\n", wantWarn: []string{`3:read as the text "b: c"`}},
		{name: "missing name", src: "---\ndescription: b\n---\n", wantWarn: []string{`1:folder name "x" is used`}},
		{name: "missing description", src: "---\nname: a\n---\nThe body.\n", wantWarn: []string{"1:first paragraph"}},
		{name: "no description no body", src: "---\nname: a\n---\n", wantErr: []string{"1:neither a description nor a body"}},
		{name: "empty description", src: "---\nname: a\ndescription: \"  \"\n---\n", wantErr: []string{"3:neither a description nor a body"}},
		{name: "bad name", src: "---\nname: ../etc\ndescription: b\n---\n", wantErr: []string{"2:could name a path"}},
		{name: "name is a list", src: "---\nname: [a]\ndescription: b\n---\n", wantWarn: []string{"2:name must be a string, not a list", `2:installed as "a"`}},
		{name: "name with spaces", src: "---\nname: Hook Development\ndescription: b\n---\n", wantWarn: []string{`2:installed as "hook-development"`}},
		{name: "deep", src: "---\nname: a\ndescription: b\nmetadata: " + strings.Repeat("{a: ", 10000) + "1" + strings.Repeat("}", 10000) + "\n---\n", wantErr: []string{"4:more than 32 levels"}},
		{name: "nested duplicate", src: "---\nname: a\ndescription: b\npermissions: {env: [A], env: [\"*\"]}\n---\n", wantErr: []string{`4:"permissions.env" appears twice`}},
		{name: "nested duplicate lines", src: "---\nname: a\ndescription: b\nplugin:\n  command: a\n  command: b\n---\n", wantErr: []string{`6:"plugin.command" appears twice (on lines 5 and 6)`}},
		{name: "env star warns", src: "---\nname: a\ndescription: b\npermissions: {env: [\"*\"]}\n---\n", wantWarn: []string{`4:passes every environment variable`}},
		{name: "yes is true", src: "---\nname: a\ndescription: b\nuser-invocable: no\n---\n", wantWarn: []string{`4:"no" is read as false`}},
		{name: "bad version warns", src: "---\nname: a\ndescription: b\nversion: banana\n---\n", wantWarn: []string{"4:not a semantic version"}},
		{name: "bad min_agent_version", src: "---\nname: a\ndescription: b\nmin_agent_version: banana\n---\n", wantErr: []string{"4:not a semantic version"}},
		{name: "bad constraint", src: "---\nname: a\ndescription: b\nagent_version: \">>1\"\n---\n", wantErr: []string{"4:not a version constraint"}},
		{name: "bad bool", src: "---\nname: a\ndescription: b\nuser-invocable: maybe\n---\n", wantErr: []string{"4:must be true or false"}},
		{name: "scripts not list", src: "---\nname: a\ndescription: b\nscripts: {a: 1}\n---\n", wantErr: []string{"4:scripts must be a list"}},
		{name: "script path", src: "---\nname: a\ndescription: b\nscripts: [../x]\n---\n", wantErr: []string{"4:not a script name"}},
		{name: "plugin both", src: "---\nname: a\ndescription: b\nplugin: {build: p, command: c}\n---\n", wantErr: []string{"4:both build and command"}},
		{name: "plugin escapes", src: "---\nname: a\ndescription: b\nplugin:\n  build: ../../x\n---\n", wantErr: []string{"5:stay inside the skill"}},
		{name: "metadata list", src: "---\nname: a\ndescription: b\nmetadata: [1]\n---\n", wantErr: []string{"4:metadata must be a mapping"}},
		{name: "duplicate key", src: "---\nname: a\nname: b\ndescription: b\n---\n", wantErr: []string{"3:appears twice"}},
		{name: "not a mapping", src: "---\n- a\n---\n", wantErr: []string{"2:must be a YAML mapping"}},
		{name: "empty front matter", src: "---\n---\nbody\n", wantWarn: []string{"1:folder name", "1:first paragraph"}},
		{name: "invalid utf8", src: "---\nname: a\ndescription: \xff\n---\n", wantErr: []string{"3:not valid UTF-8"}},
		{name: "many errors", src: "---\nmax_agent_version: x\nuser-invocable: 3\n---\n", wantErr: []string{"1:neither a description nor a body", "2:not a semantic version", "3:must be true or false"}},
		{name: "long description warns", src: "---\nname: a\ndescription: " + long + "\n---\n", wantWarn: []string{"3:over the recommended 1024"}},
		{name: "unknown key warns", src: "---\nname: a\ndescription: b\nfoo: {x: 1}\n---\n", wantWarn: []string{"4:unknown key \"foo\""}},
		{name: "crlf", src: "---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n"},
	}
	check := func(t *testing.T, kind string, got []Problem, want []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s = %v; want %v", kind, got, want)
		}
		for i, w := range want {
			line, sub, _ := strings.Cut(w, ":")
			if g := got[i]; g.File != "x/SKILL.md" || itoa(g.Line) != line || !strings.Contains(g.Message, sub) {
				t.Errorf("%s[%d] = %v; want line %s containing %q", kind, i, g, line, sub)
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, warns, err := ParseManifest("x/SKILL.md", []byte(tt.src))
			var me *ManifestError
			if len(tt.wantErr) > 0 {
				if !errors.As(err, &me) || !errors.Is(err, ErrInvalidManifest) || m != nil {
					t.Fatalf("err = %v, m = %v; want a *ManifestError", err, m)
				}
				check(t, "errors", me.Problems, tt.wantErr)
				if !strings.Contains(err.Error(), "x/SKILL.md:") {
					t.Errorf("Error() = %q; want file:line", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			check(t, "warnings", warns, tt.wantWarn)
		})
	}
}

func itoa(n int) string { return fmtInt(n) }

func fmtInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestManifestJSON(t *testing.T) {
	t.Parallel()
	src := "---\nname: a\ndescription: b\nmetadata: {1: one, nested: {2: two, x: [.inf]}}\nodd: {true: yes}\n---\n"
	m, _, err := ParseManifest("SKILL.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	for _, want := range []string{`"1":"one"`, `"2":"two"`, `"true":"yes"`, `"x":["+Inf"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON %s lacks %s", b, want)
		}
	}
}

// loadDir parses dir/SKILL.md from disk as a caller does: the package
// itself reads only through an fs.FS.
func loadDir(t *testing.T, dir string) (*Manifest, []Problem, error) {
	t.Helper()
	file := filepath.Join(dir, ManifestFile)
	data, err := Read(os.DirFS(dir), ManifestFile, file)
	if err != nil {
		return nil, nil, err
	}
	return ParseManifestIn(file, filepath.Base(dir), data)
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	ok := "---\nname: a\ndescription: b\n---\n"
	tests := []struct {
		name string
		fsys fstest.MapFS
		want string // "" wants the file read
	}{
		{"a regular file", fstest.MapFS{"SKILL.md": {Data: []byte(ok)}}, ""},
		{"no SKILL.md", fstest.MapFS{"README.md": {Data: []byte(ok)}}, "no SKILL.md here"},
		{"a link", fstest.MapFS{"SKILL.md": {Data: []byte("real.md"), Mode: fs.ModeSymlink}, "real.md": {Data: []byte(ok)}}, "symbolic link"},
		{"a folder", fstest.MapFS{"SKILL.md/x": {Data: []byte(ok)}}, "not a regular file"},
		{"too large", fstest.MapFS{"SKILL.md": {Data: bytes.Repeat([]byte("a"), MaxManifestSize+1)}}, "larger than"},
		{"exactly the limit", fstest.MapFS{"SKILL.md": {Data: bytes.Repeat([]byte("a"), MaxManifestSize)}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := Read(tt.fsys, ManifestFile, "skills/a/SKILL.md")
			if tt.want == "" {
				if err != nil || !bytes.Equal(data, tt.fsys[ManifestFile].Data) {
					t.Fatalf("Read = %q, %v; want the file", data, err)
				}
				return
			}
			var me *ManifestError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.want) || me.Problems[0].File != "skills/a/SKILL.md" {
				t.Fatalf("Read = %v; want a problem in skills/a/SKILL.md saying %q", err, tt.want)
			}
		})
	}
}

// On disk, os.DirFS reports links (fs.ReadLinkFS), so a SKILL.md linked to
// a file elsewhere is refused too.
func TestReadRefusesSymlinkOnDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(t.TempDir(), "real.md")
	if err := os.WriteFile(real, []byte("---\nname: a\ndescription: b\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	_, _, err := loadDir(t, dir)
	if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("load = %v; want a symlink error", err)
	}
}

func TestCheckCompatibility(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		m       Manifest
		agent   string
		wantErr bool
	}{
		{name: "no limits", agent: "0.1.0"},
		{name: "min ok", m: Manifest{MinAgentVersion: "0.1.0"}, agent: "0.1.0"},
		{name: "min too new", m: Manifest{MinAgentVersion: "0.2.0"}, agent: "0.1.9", wantErr: true},
		{name: "max ok", m: Manifest{MaxAgentVersion: "1.0.0"}, agent: "1.0.0"},
		{name: "max exceeded", m: Manifest{MaxAgentVersion: "1.0.0"}, agent: "1.0.1", wantErr: true},
		{name: "constraint ok", m: Manifest{AgentVersion: ">=0.2, <1"}, agent: "0.5.0"},
		{name: "constraint fails", m: Manifest{AgentVersion: ">=0.2, <1"}, agent: "1.0.0", wantErr: true},
		{name: "prerelease counts as release", m: Manifest{AgentVersion: ">=0.2"}, agent: "0.2.0-dev"},
		{name: "dev build skips", m: Manifest{MinAgentVersion: "9.0.0"}, agent: "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.m.Name = "s"
			err := CheckCompatibility(&tt.m, tt.agent)
			if tt.wantErr != errors.Is(err, ErrIncompatible) {
				t.Fatalf("CheckCompatibility = %v; wantErr %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.agent) {
				t.Errorf("error %q does not name agent version %s", err, tt.agent)
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	seeds := []string{
		"---\nname: a\ndescription: b\n---\nbody\n",
		"---\nname: A_b\ndescription: x\nplugin: {build: ./p}\nscripts: [a]\npermissions: {env: [X]}\nallowed-tools: Read, Bash(x:*)\n---\n",
		"\ufeff---\n", "---\n", "---\n---\n", "no front matter", "---\n- a\n---\n",
		"---\nname: &a x\ndescription: *a\n---\n", "---\nmetadata: {a: [1, {b: 2}]}\n---\n",
		"---\r\nname: a\r\ndescription: b\r\n...\r\n",
		"---\nname: a\ndescription: b\nwhen_to_use: x\npaths: [a, b]\nhooks: {Stop: [{hooks: [{type: command, command: x}]}]}\nshell: bash\ndisallowed-tools: Bash\neffort: low\nbackground: true\ndisplay-name: A\n---\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, warns, err := ParseManifest("SKILL.md", data)
		if err != nil {
			var me *ManifestError
			if !errors.As(err, &me) || len(me.Problems) == 0 || m != nil {
				t.Fatalf("error %v is not a non-empty *ManifestError", err)
			}
			for _, p := range me.Problems {
				if p.Line < 1 || p.Message == "" {
					t.Fatalf("problem without line or message: %+v", p)
				}
			}
			return
		}
		if _, cerr := Canonical(m.Name); cerr != nil || strings.TrimSpace(m.Description) == "" {
			t.Fatalf("accepted manifest with bad name %q or empty description", m.Name)
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("manifest does not encode as JSON: %v", err)
		}
		if m.Plugin != nil && !InsideRel(m.Plugin.Build+m.Plugin.Command) {
			t.Fatalf("accepted escaping plugin path %+v", m.Plugin)
		}
		for _, w := range warns {
			if w.Message == "" {
				t.Fatal("empty warning")
			}
		}
	})
}

// TestHostMetadata reads this host's fields from metadata, the form the
// Agent Skills specification allows (SPEC §3), and refuses a field given
// both ways.
func TestHostMetadata(t *testing.T) {
	t.Parallel()
	const head = "---\nname: a\ndescription: d\n"
	tests := []struct {
		name    string
		front   string
		check   func(t *testing.T, m *Manifest)
		errs    []string // substrings of the errors, in line order
		warning string   // a substring of one warning
	}{
		{name: "every field", front: "metadata:\n  team: data\n  agent.version: \"1.2.0\"\n  agent.plugin.build: ./plugin\n  agent.scripts: status report.py\n  agent.scripts.ignore: \"_*.py *_test.py\"\n  agent.permissions.env: KALSHI_* HOME\n  agent.min-version: 0.1.0\n  agent.max-version: \"9.0.0\"\n  agent.version-constraint: \">=0.1, <10\"\n",
			check: func(t *testing.T, m *Manifest) {
				got := fmt.Sprintln(m.Version, m.Plugin.Build, m.Scripts, m.ScriptsIgnore, m.Permissions.Env, m.MinAgentVersion, m.MaxAgentVersion, m.AgentVersion)
				want := "1.2.0 ./plugin [status report.py] [_*.py *_test.py] [KALSHI_* HOME] 0.1.0 9.0.0 >=0.1, <10\n"
				if got != want {
					t.Errorf("fields = %q; want %q", got, want)
				}
				if m.Metadata["team"] != "data" || m.Metadata["agent.version"] != "1.2.0" {
					t.Errorf("metadata = %v; want it kept as written", m.Metadata)
				}
			}},
		{name: "command", front: "metadata:\n  agent.plugin.command: bin/tool\n",
			check: func(t *testing.T, m *Manifest) {
				if m.Plugin == nil || m.Plugin.Command != "bin/tool" {
					t.Errorf("plugin = %+v", m.Plugin)
				}
			}},
		{name: "both forms of version", front: "version: 1.0.0\nmetadata:\n  agent.version: \"1.0.0\"\n",
			errs: []string{"version is given twice: top-level 'version' (line 4) and metadata 'agent.version'"}},
		{name: "both forms of plugin", front: "plugin: {build: ./plugin}\nmetadata:\n  agent.plugin.command: bin/x\n",
			errs: []string{"plugin is given twice"}},
		{name: "both forms of env", front: "permissions:\n  env: [A]\nmetadata:\n  agent.permissions.env: B\n",
			errs: []string{"permissions.env is given twice"}},
		{name: "build and command", front: "metadata:\n  agent.plugin.build: ./p\n  agent.plugin.command: bin/x\n",
			errs: []string{"metadata sets both agent.plugin.build and agent.plugin.command"}},
		{name: "plugin outside", front: "metadata:\n  agent.plugin.build: ../p\n",
			errs: []string{"plugin path \"../p\" must be relative and stay inside"}},
		{name: "bad script", front: "metadata:\n  agent.scripts: ../x\n",
			errs: []string{"agent.scripts: \"../x\" is not a script name"}},
		{name: "bad min version", front: "metadata:\n  agent.min-version: soon\n",
			errs: []string{"min_agent_version \"soon\" is not a semantic version"}},
		{name: "a number", front: "metadata:\n  agent.version: 1.0\n",
			warning: "metadata.agent.version: YAML reads 1.0 as a number",
			check: func(t *testing.T, m *Manifest) {
				if m.Version != "1.0" {
					t.Errorf("version = %q; want the text as written", m.Version)
				}
			}},
		{name: "cgo", front: "metadata:\n  agent.plugin.build: ./p\n  agent.cgo: \"true\"\n",
			check: func(t *testing.T, m *Manifest) {
				if !m.CGO {
					t.Error("agent.cgo: true did not ask for cgo")
				}
			}},
		{name: "cgo top-level", front: "plugin: {build: ./p}\ncgo: true\n",
			check: func(t *testing.T, m *Manifest) {
				if !m.CGO {
					t.Error("cgo: true did not ask for cgo")
				}
			}},
		{name: "cgo not a boolean", front: "metadata:\n  agent.cgo: \"maybe\"\n", errs: []string{`agent.cgo: "maybe" is not true or false`}},
		{name: "typo", front: "metadata:\n  agent.verison: \"1\"\n", warning: `metadata key "agent.verison" is not one this host reads`},
		{name: "sandbox lists", front: "metadata:\n  agent.permissions.network: \"example.com:443 api.example.com:443\"\n  agent.permissions.fs.read: \"~/data $WORKSPACE\"\n  agent.permissions.fs.write: $TMP/out\n",
			check: func(t *testing.T, m *Manifest) {
				got := fmt.Sprintln(m.Permissions.Network, m.Permissions.FS.Read, m.Permissions.FS.Write)
				if got != "[example.com:443 api.example.com:443] [~/data $WORKSPACE] [$TMP/out]\n" {
					t.Errorf("permissions = %q", got)
				}
			}},
		{name: "both forms of network", front: "permissions:\n  network: [\"a.example:443\"]\nmetadata:\n  agent.permissions.network: b.example:443\n",
			errs: []string{"permissions.network is given twice: top-level 'permissions.network' (line 5)"}},
		{name: "bad fs path", front: "metadata:\n  agent.permissions.fs.read: data\n",
			errs: []string{"agent.permissions.fs.read: \"data\" is not an absolute path"}},
		{name: "other namespaces untouched", front: "metadata:\n  acme.version: x\n",
			check: func(t *testing.T, m *Manifest) {
				if m.Version != "" {
					t.Errorf("version = %q; want none", m.Version)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, warns, err := ParseManifest("a/SKILL.md", []byte(head+tt.front+"---\nbody\n"))
			if len(tt.errs) > 0 {
				var me *ManifestError
				if !errors.As(err, &me) || len(me.Problems) != len(tt.errs) {
					t.Fatalf("err = %v; want %q", err, tt.errs)
				}
				for i, w := range tt.errs {
					if !strings.Contains(me.Problems[i].Message, w) {
						t.Errorf("error %d = %q; want %q", i, me.Problems[i].Message, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.warning != "" && !slices.ContainsFunc(warns, func(p Problem) bool { return strings.Contains(p.Message, tt.warning) }) {
				t.Errorf("warnings = %v; want %q", warns, tt.warning)
			}
			if tt.warning == "" && len(warns) > 0 {
				t.Errorf("warnings = %v; want none", warns)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}
