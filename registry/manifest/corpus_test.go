package manifest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestManifestCorpus loads every SKILL.md under testdata, one per
// row of the SPEC §3 recovery table and per error that remains. Each
// folder's want file lists what must come out:
//
//	warn LINE TEXT    a recovered warning on LINE containing TEXT
//	error LINE TEXT   an error on LINE containing TEXT
//	name NAME         the canonical name
//	description TEXT  the description
//
// A recover-* skill must load and be flagged by CheckStrict; an error-* one
// must not load.
func TestManifestCorpus(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob(filepath.Join("testdata", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(dir, "want"))
			if err != nil {
				t.Fatal(err)
			}
			m, warns, err := loadDir(t, dir)
			var problems []Problem
			var me *ManifestError
			if errors.As(err, &me) {
				problems = me.Problems
			} else if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				kind, rest, _ := strings.Cut(line, " ")
				switch kind {
				case "warn", "error":
					n, text, _ := strings.Cut(rest, " ")
					in := warns
					if kind == "error" {
						in = problems
					}
					if !hasProblem(in, n, text, kind == "warn") {
						t.Errorf("want %s on line %s containing %q; got warnings %v, errors %v", kind, n, text, warns, problems)
					}
				case "name":
					if m == nil || m.Name != rest {
						t.Errorf("name = %v; want %q", m, rest)
					}
				case "description":
					if m == nil || m.Description != rest {
						t.Errorf("description = %v; want %q", m, rest)
					}
				}
			}
			switch {
			case strings.HasPrefix(filepath.Base(dir), "recover-"):
				if err != nil {
					t.Fatalf("recoverable skill refused: %v", err)
				}
				abs, _ := filepath.Abs(dir)
				strict := CheckStrict(filepath.Join(dir, ManifestFile), filepath.Base(abs), m, warns)
				if len(strict) == 0 {
					t.Errorf("CheckStrict found nothing in a skill that needed recovery")
				}
			case strings.HasPrefix(filepath.Base(dir), "error-"):
				if err == nil {
					t.Fatalf("loaded; want an error")
				}
			}
		})
	}
}

func hasProblem(ps []Problem, line, text string, recovered bool) bool {
	for _, p := range ps {
		if strconv.Itoa(p.Line) == line && strings.Contains(p.Message, text) && (!recovered || p.Recovered || strings.Contains(p.Message, "environment")) {
			return true
		}
	}
	return false
}

func TestCheckStrict(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 501)
	tests := []struct {
		name, src, folder string
		want              []string
	}{
		{name: "clean", src: "---\nname: a-b\ndescription: d\n---\n", folder: "a-b"},
		{name: "folder differs", src: "---\nname: a-b\ndescription: d\n---\n", folder: "other", want: []string{"must equal its folder name"}},
		{name: "underscore", src: "---\nname: a_b\ndescription: d\n---\n", folder: "a_b", want: []string{"only letters, digits and hyphens"}},
		{name: "double hyphen", src: "---\nname: a--b\ndescription: d\n---\n", folder: "a--b", want: []string{"two in a row"}},
		{name: "compatibility", src: "---\nname: a\ndescription: d\ncompatibility: " + long + "\n---\n", folder: "a", want: []string{"compatibility is 501"}},
		{name: "empty compatibility", src: "---\nname: a\ndescription: d\ncompatibility: \"\"\n---\n", folder: "a", want: []string{"compatibility is 0"}},
		{name: "metadata", src: "---\nname: a\ndescription: d\nmetadata: {n: 1}\n---\n", folder: "a", want: []string{"metadata.n must be a string"}},
		{name: "recovery", src: "---\nname: a\ndescription: d\nlicense: 1.0\n---\n", folder: "a", want: []string{"YAML reads 1.0 as a number"}},
		{name: "host field at the top", src: "---\nname: a\ndescription: d\nversion: \"1.0.0\"\nplugin: {build: ./plugin}\n---\n", folder: "a",
			want: []string{`field "version" is not one of the six it allows (name, description, license, compatibility, metadata, allowed-tools); write it under metadata as agent.version`,
				`field "plugin" is not one of the six it allows (name, description, license, compatibility, metadata, allowed-tools); write it under metadata as agent.plugin.build or agent.plugin.command`}},
		{name: "claude code field", src: "---\nname: a\ndescription: d\nargument-hint: x\n---\n", folder: "a", want: []string{`field "argument-hint" is not one of the six`}},
		{name: "host fields under metadata", src: "---\nname: a\ndescription: d\nmetadata:\n  agent.version: \"1.0.0\"\n  agent.plugin.build: ./plugin\n  agent.permissions.env: A B\n---\n", folder: "a"},
		{name: "unicode name", src: "---\nname: café-日本\ndescription: d\n---\n", folder: "café-日本"},
		{name: "NFKC name", src: "---\nname: ﬁle\ndescription: d\n---\n", folder: "file"},
		{name: "uppercase", src: "---\nname: Café\ndescription: d\n---\n", folder: "Café", want: []string{`must be lowercase: write "café"`}},
		{name: "greek", src: "---\nname: x-αβ\ndescription: d\n---\n", folder: "x-αβ", want: []string{"only letters, digits and hyphens"}},
		{name: "long name", src: "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", folder: strings.Repeat("a", 65), want: []string{"65 characters"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, warns, err := ParseManifest(tt.folder+"/SKILL.md", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			got := CheckStrict("SKILL.md", tt.folder, m, warns)
			if len(got) != len(tt.want) {
				t.Fatalf("CheckStrict = %v; want %q", got, tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].Message, w) {
					t.Errorf("problem %d = %q; want %q", i, got[i].Message, w)
				}
			}
		})
	}
}

// FuzzRecoverFrontMatter feeds arbitrary front matter to the recovering
// parser: it must never panic, keep line numbers (quoting folds lines into
// empty ones), never rewrite what strict YAML already reads, and report
// every duplicate key that yaml.v3 itself would reject.
func FuzzRecoverFrontMatter(f *testing.F) {
	for _, s := range []string{
		"name: a\ndescription: Use when: the user asks\n",
		"argument-hint: [a] [b]\nversion: 1.0\n",
		"description: a\n  b: c\nuser-invocable: yes\n",
		"permissions: {env: [A], env: [\"*\"]}\n",
		"plugin:\n  command: a\n  command: b\n",
		"name: Hook Development\ndescription: \"x\" y\n",
		"metadata: [[[[[[]]]]]]\n",
		"description: |\n  a: b\n",
		"a: &x 1\nb: *x\n",
		"name: a\n  description: b\n  license: c\n    x: y\n",
		"version: 1.0.0\nmetadata:\n  agent.version: 1.0\n  agent.plugin.build: ../x\n  agent.plugin.command: y\n  agent.verison: z\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, front string) {
		if strings.Contains(front, "\n---") || strings.HasPrefix(front, "---") || strings.Contains(front, "\n...") {
			return // a fence would end the front matter early
		}
		lines := strings.SplitAfter(front, "\n")
		fixed, fixes := quotePlainValues(lines)
		if len(fixed) != len(lines) {
			t.Fatalf("quotePlainValues changed the line count: %d -> %d", len(lines), len(fixed))
		}
		var strictDoc yaml.Node
		strictOK := yaml.Unmarshal([]byte(front), &strictDoc) == nil
		src := "---\n" + front
		if !strings.HasSuffix(src, "\n") {
			src += "\n"
		}
		src += "---\nbody\n"
		m, warns, err := ParseManifest("x/SKILL.md", []byte(src))
		for _, w := range warns {
			if w.Line < 1 || w.Message == "" {
				t.Fatalf("warning without line or message: %+v", w)
			}
			if strictOK && strings.Contains(w.Message, "not valid YAML as written") {
				t.Fatalf("rewrote front matter that strict YAML reads: %v", w)
			}
		}
		_ = fixes
		if err == nil {
			if _, cerr := Canonical(m.Name); cerr != nil {
				t.Fatalf("accepted name %q: %v", m.Name, cerr)
			}
			var asMap map[string]any
			if strictOK && yaml.Unmarshal([]byte(front), &asMap) != nil && strings.Contains(yamlErr(front), "already defined") {
				t.Fatalf("accepted front matter with a duplicate key: %q", front)
			}
		}
	})
}

func yamlErr(s string) string {
	var v map[string]any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return err.Error()
	}
	return ""
}
