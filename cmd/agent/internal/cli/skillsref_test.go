package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/app/scaffold"
)

// skillsRef is the Agent Skills reference validator, npm skills-ref pinned
// in testdata/skillsref and installed there by .ci/run with npm ci.
const skillsRef = "testdata/skillsref/node_modules/.bin/skills-ref"

// strictFixture is one SKILL.md (or a scaffold from skill init) in a
// folder of its own name.
type strictFixture struct {
	name   string
	folder string
	src    string            // the SKILL.md; empty with init set
	init   *scaffold.Options // what agent skill init writes
	// refOK is what skills-ref says, strictOK what validate --strict says.
	// They differ only where --strict is stricter, and why says why.
	refOK, strictOK bool
	why             string
}

func strictFixtures() []strictFixture {
	long := func(n int) string { return strings.Repeat("x", n) }
	fm := func(front string) string { return "---\n" + front + "---\nBody.\n" }
	return []strictFixture{
		{name: "init", folder: "demo", init: &scaffold.Options{Name: "demo"}, refOK: true, strictOK: true},
		{name: "init with plugin and script", folder: "hello-world", init: &scaffold.Options{Name: "hello-world", Plugin: true, Script: true}, refOK: true, strictOK: true},
		{name: "minimal", folder: "a-b", src: fm("name: a-b\ndescription: d\n"), refOK: true, strictOK: true},
		{name: "all six", folder: "six", src: fm("name: six\ndescription: d\nlicense: MIT\ncompatibility: Needs python3\nallowed-tools: Read Bash(git:*)\nmetadata:\n  team: data\n"), refOK: true, strictOK: true},
		{name: "host fields under metadata", folder: "meta", src: fm("name: meta\ndescription: d\nmetadata:\n  agent.version: \"1.0.0\"\n  agent.scripts.ignore: \"_*.py *_test.py\"\n  agent.permissions.env: HOME LANG\n"), refOK: true, strictOK: true},
		{name: "unicode name", folder: "café-日本", src: fm("name: café-日本\ndescription: d\n"), refOK: true, strictOK: true},
		{name: "NFKC name", folder: "file", src: fm("name: ﬁle\ndescription: d\n"), refOK: true, strictOK: true},
		{name: "description at the limit", folder: "d", src: fm("name: d\ndescription: " + long(1024) + "\n"), refOK: true, strictOK: true},

		{name: "host field at the top", folder: "top", src: fm("name: top\ndescription: d\nversion: 1.0.0\n")},
		{name: "plugin at the top", folder: "plug", src: fm("name: plug\ndescription: d\nplugin:\n  build: ./plugin\n")},
		{name: "claude code field", folder: "cc", src: fm("name: cc\ndescription: d\nargument-hint: \"[n]\"\n")},
		{name: "uppercase", folder: "Abc", src: fm("name: Abc\ndescription: d\n")},
		{name: "underscore", folder: "a_b", src: fm("name: a_b\ndescription: d\n")},
		{name: "space", folder: "a b", src: fm("name: a b\ndescription: d\n")},
		{name: "leading hyphen", folder: "-ab", src: fm("name: -ab\ndescription: d\n")},
		{name: "double hyphen", folder: "a--b", src: fm("name: a--b\ndescription: d\n")},
		{name: "greek", folder: "x-αβ", src: fm("name: x-αβ\ndescription: d\n")},
		{name: "name too long", folder: long(65), src: fm("name: " + long(65) + "\ndescription: d\n")},
		{name: "folder differs", folder: "other", src: fm("name: a-b\ndescription: d\n")},
		{name: "no name", folder: "noname", src: fm("description: d\n")},
		{name: "no description", folder: "nodesc", src: fm("name: nodesc\n")},
		{name: "description too long", folder: "d", src: fm("name: d\ndescription: " + long(1025) + "\n")},
		{name: "compatibility too long", folder: "c", src: fm("name: c\ndescription: d\ncompatibility: " + long(501) + "\n")},
		{name: "compatibility a number", folder: "c", src: fm("name: c\ndescription: d\ncompatibility: 3\n")},
		{name: "no front matter", folder: "nofm", src: "# Title\n\nDoes things.\n"},
		{name: "unquoted colon", folder: "colon", src: fm("name: colon\ndescription: Use when: the user asks\n")},
		{name: "duplicate key", folder: "dup", src: fm("name: dup\ndescription: d\ndescription: e\n")},
		{name: "closed with dots", folder: "dots", src: "---\nname: dots\ndescription: d\n...\nBody.\n"},
		{name: "not a mapping", folder: "list", src: fm("- name\n- description\n")},

		{name: "nested metadata", folder: "nested", src: fm("name: nested\ndescription: d\nmetadata:\n  a:\n    b: c\n"), refOK: true,
			why: "skills-ref turns a nested metadata value into the text [object Object] without a word; the specification maps strings to strings"},
		{name: "metadata number", folder: "num", src: fm("name: num\ndescription: d\nmetadata:\n  n: 1\n"), refOK: true,
			why: "skills-ref stringifies a number in metadata; the specification maps strings to strings"},
		{name: "description a number", folder: "dnum", src: fm("name: dnum\ndescription: 42\n"), refOK: true,
			why: "skills-ref stringifies a number where the description belongs; --strict refuses the recovery"},
		{name: "empty compatibility", folder: "ec", src: fm("name: ec\ndescription: d\ncompatibility: \"\"\n"), refOK: true,
			why: "the specification gives compatibility 1-500 characters; skills-ref checks only the upper bound"},
	}
}

func (fx strictFixture) write(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), fx.folder)
	if fx.init != nil {
		if _, err := scaffold.Write(dir, *fx.init); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(fx.src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestStrictFixtures checks `validate --strict` on the fixtures, with or
// without the reference validator.
func TestStrictFixtures(t *testing.T) {
	t.Parallel()
	for _, fx := range strictFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			if fx.refOK != fx.strictOK && fx.why == "" {
				t.Fatal("a fixture where --strict and skills-ref differ must say why")
			}
			errs, _, _ := lintSkill(fx.write(t), true)
			if got := len(errs) == 0; got != fx.strictOK {
				t.Fatalf("validate --strict accepts = %v, want %v; problems: %v", got, fx.strictOK, errs)
			}
		})
	}
}

// TestSkillsRefAgreement runs the reference validator over the same
// fixtures: whatever it rejects, --strict rejects; what skill init writes
// it accepts; where --strict is stricter, the fixture says why.
func TestSkillsRefAgreement(t *testing.T) {
	t.Parallel()
	bin, err := filepath.Abs(skillsRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("skills-ref is not installed (%v): .ci/run installs it with npm ci in cmd/agent/internal/cli/testdata/skillsref; without the npm registry this test cannot run", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed: %v", err)
	}
	for _, fx := range strictFixtures() {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			dir := fx.write(t)
			cmd := exec.Command(bin, "validate", dir)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatalf("skills-ref: %v\n%s", err, out.Bytes())
			}
			refOK := err == nil
			if refOK != fx.refOK {
				t.Fatalf("skills-ref accepts = %v, want %v:\n%s", refOK, fx.refOK, out.Bytes())
			}
			errs, _, _ := lintSkill(dir, true)
			if !refOK && len(errs) == 0 {
				t.Fatalf("skills-ref rejects it but validate --strict accepts it:\n%s", out.Bytes())
			}
			t.Logf("skills-ref: %s", strings.TrimSpace(out.String()))
		})
	}
}
