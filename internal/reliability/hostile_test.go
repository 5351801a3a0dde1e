//go:build reliability

package reliability

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// rssLimit bounds the peak RSS of an agent process fed hostile input. An
// idle agent call peaks near 40 MB here; the bound leaves room for a
// clone and still fails if a 50 MB or 100 MB input is ever held whole.
const rssLimit = 160 << 20

// hugeRSSLimit bounds the clone of a repository with a 50 MB SKILL.md: six
// times the file.
const hugeRSSLimit = 300 << 20

// TestReliabilityHostileInput feeds the CLI hostile names and paths (SPEC
// §4), symbolic links out of a skill, a 50 MB SKILL.md, a 100 MB tool
// result and script output, a script that writes to stderr forever,
// arguments with NUL bytes and oversized arguments. Each must fail (or be
// truncated) with a clear message, within rssLimit, and leave the
// installed skills byte for byte as they were.
func TestReliabilityHostileInput(t *testing.T) {
	repo := newSkillRepo(t, nil)
	home, environ := installed(t, repo, "AGENT_SCRIPT_TIMEOUT=3")
	timeoutEnv := environ

	repos := t.TempDir()
	hostileRepo := func(name string, files map[string]string, links map[string]string) string {
		t.Helper()
		r := gittest.NewRepoIn(t, filepath.Join(repos, name), nil)
		for l, target := range links {
			r.Symlink(t, l, target)
		}
		r.Commit(t, files, "hostile")
		return r.FileURL()
	}
	okManifest := func(name string) string {
		return "---\nname: " + name + "\ndescription: Hostile test skill.\n---\nbody\n"
	}

	type tc struct {
		name   string
		args   []string
		stdin  string
		words  []string // one of them must appear in the output (case-insensitive)
		allow0 bool     // success is fine (truncation), but the message must warn
		rss    int64    // peak RSS limit; 0 means rssLimit
	}
	var cases []tc

	// Names from SPEC §4, through every command that takes one.
	badNames := []string{".", "..", "~", "__pycache__", "__PyCache__", "a..b", "../scripty", "..\\scripty",
		"a/b", "/etc", "a b", "scripty ", " scripty", "scripty\t", strings.Repeat("a", 65), "skills/../scripty", "scrípty", "scripty;rm", "$HOME"}
	for _, n := range badNames {
		q := fmt.Sprintf("%q", n)
		cases = append(cases,
			tc{name: "add --name " + q, args: []string{"skill", "add", repo.FileURL(), "scripty", "--name", n, "--trust"}, words: []string{"invalid", "name"}},
			tc{name: "add selector " + q, args: []string{"skill", "add", repo.FileURL(), n, "--trust"}, words: []string{"invalid", "no skill", "not"}},
			tc{name: "remove " + q, args: []string{"skill", "remove", n, "--yes"}, words: []string{"invalid", "not installed"}},
			tc{name: "update " + q, args: []string{"skill", "update", n, "--yes"}, words: []string{"invalid", "not installed"}},
			tc{name: "info " + q, args: []string{"skill", "info", n}, words: []string{"invalid", "not installed"}},
			tc{name: "trust " + q, args: []string{"skill", "untrust", n}, words: []string{"invalid", "not installed"}},
			tc{name: "show " + q, args: []string{"skill", "show", n}, words: []string{"invalid", "not installed"}},
			tc{name: "script_run skill " + q, args: []string{"call", "script_run", jsonArgs(n, "hello")}, words: []string{"invalid_name", "not_found"}},
			tc{name: "call " + q + ".work", args: []string{"call", n + ".work", `{"i":1}`}, words: []string{"invalid", "not", "unknown"}},
		)
	}
	cases = append(cases, tc{name: "remove \"\"", args: []string{"skill", "remove", "", "--yes"}, words: []string{"invalid", "empty"}})
	for _, s := range []string{"../SKILL.md", "../../../../../../etc/passwd", "/etc/passwd", "hello/../hello", "__pycache__", ".", "..", "", "~", "hello.py/", "scripts/hello"} {
		cases = append(cases, tc{name: fmt.Sprintf("script_run script %q", s), args: []string{"call", "script_run", jsonArgs("scripty", s)}, words: []string{"invalid_name", "not_found"}})
	}
	// Manifests that name themselves badly.
	for i, n := range []string{"../evil", "a/b", "__pycache__", "..", "~", strings.Repeat("b", 65), "\"a b\""} {
		url := hostileRepo(fmt.Sprintf("badname%d", i), map[string]string{"SKILL.md": okManifest(n)}, nil)
		cases = append(cases, tc{name: fmt.Sprintf("add manifest name %q", n), args: []string{"skill", "add", url, "--trust"}, words: []string{"name"}})
	}
	// Symbolic links that leave the skill.
	symlinkCases := []struct {
		name  string
		files map[string]string
		links map[string]string
		sel   string
	}{
		{"script -> /etc/passwd", map[string]string{"SKILL.md": okManifest("linky")}, map[string]string{"scripts/evil.py": "/etc/passwd"}, ""},
		{"references/up -> ../../..", map[string]string{"SKILL.md": okManifest("linky")}, map[string]string{"references/up": "../../.."}, ""},
		{"SKILL.md -> ../other/SKILL.md", map[string]string{"other/SKILL.md": okManifest("other"), "x/README": "x"}, map[string]string{"x/SKILL.md": "../other/SKILL.md"}, "x"},
		{"skill folder -> outside", map[string]string{"README": "x"}, map[string]string{"skills/linked": "/tmp"}, "linked"},
		{"plugin.command through a link to /bin", map[string]string{"SKILL.md": "---\nname: linky\ndescription: d\nplugin:\n  command: bin/true\n---\n"}, map[string]string{"bin": "/bin"}, ""},
		{"plugin.command ../../bin/true", map[string]string{"SKILL.md": "---\nname: linky\ndescription: d\nplugin:\n  command: ../../bin/true\n---\n"}, nil, ""},
	}
	for i, sc := range symlinkCases {
		url := hostileRepo(fmt.Sprintf("symlink%d", i), sc.files, sc.links)
		args := []string{"skill", "add", url, "--trust"}
		if sc.sel != "" {
			args = []string{"skill", "add", url, sc.sel, "--trust"}
		}
		cases = append(cases, tc{name: "add with " + sc.name, args: args, words: []string{"symbolic link", "outside", "inside the skill", "no skill", "not a directory"}})
	}
	// Sizes.
	huge := "---\nname: huge\ndescription: A 50 MB SKILL.md.\n---\n" + strings.Repeat("All work and no play makes a huge skill.\n", 50<<20/41+1)
	cases = append(cases,
		// go-git inflates whole blobs in memory while cloning and checking
		// out, so a clone costs a small multiple of its largest file.
		tc{name: "add a repository with a 50 MB SKILL.md", args: []string{"skill", "add", hostileRepo("huge", map[string]string{"SKILL.md": huge}, nil), "--trust"}, words: []string{"larger than"}, rss: hugeRSSLimit},
		tc{name: "plugin tool returns 100 MB", args: []string{"call", "crashy.big", `{"mb":100}`}, words: []string{"too large", "larger"}},
		tc{name: "script writes 100 MB to stdout", args: []string{"call", "script_run", `{"skill_name":"scripty","script_name":"flood","args":["100"],"json":false}`}, words: []string{"truncated"}, allow0: true},
		tc{name: "script writes to stderr forever", args: []string{"call", "script_run", `{"skill_name":"scripty","script_name":"noisy"}`}, words: []string{"timeout"}},
	)
	// NUL bytes and oversized arguments.
	many := make([]string, 101)
	for i := range many {
		many[i] = `"x"`
	}
	cases = append(cases,
		tc{name: "script_run arg with NUL", args: []string{"call", "script_run", `{"skill_name":"scripty","script_name":"hello","args":["a\u0000b"]}`}, words: []string{"nul"}},
		tc{name: "script_run skill name with NUL", args: []string{"call", "script_run", `{"skill_name":"scripty\u0000","script_name":"hello"}`}, words: []string{"invalid_name", "not_found"}},
		tc{name: "script_run script name with NUL", args: []string{"call", "script_run", `{"skill_name":"scripty","script_name":"hello\u0000.py"}`}, words: []string{"invalid_name", "not_found"}},
		tc{name: "call with a raw NUL in the JSON on stdin", args: []string{"call", "crashy.work", "-"}, stdin: "{\"i\":\x00}", words: []string{"json", "invalid"}},
		tc{name: "script_run 101 arguments", args: []string{"call", "script_run", `{"skill_name":"scripty","script_name":"hello","args":[` + strings.Join(many, ",") + `]}`}, words: []string{"args_too_large"}},
		tc{name: "script_run 5 KiB argument", args: []string{"call", "script_run", `{"skill_name":"scripty","script_name":"hello","args":["` + strings.Repeat("y", 5<<10) + `"]}`}, words: []string{"args_too_large"}},
	)

	before := snapshot(t, home)
	var passed int
	var peak, hugeRSS, treePeak int64
	peakCase, treeCase := "", ""
	for _, c := range cases {
		r := agentIn(t, timeoutEnv, c.stdin, c.args...)
		out := strings.ToLower(r.Stdout + r.Stderr)
		ok := true
		switch {
		case r.Code == 0 && !c.allow0:
			t.Errorf("%s: succeeded: %v", c.name, r)
			ok = false
		case r.Code != 0 && r.Code != 1 && r.Code != 2:
			t.Errorf("%s: exit %d: %v", c.name, r.Code, r)
			ok = false
		case !containsAny(out, c.words):
			t.Errorf("%s: output says none of %q: %v", c.name, c.words, r)
			ok = false
		case strings.TrimSpace(r.Stderr) == "" && !strings.Contains(r.Stdout, `"message"`):
			t.Errorf("%s: no message at all: %v", c.name, r)
			ok = false
		case len(r.Stdout)+len(r.Stderr) > 2<<20:
			t.Errorf("%s: printed %d bytes", c.name, len(r.Stdout)+len(r.Stderr))
			ok = false
		case r.MaxRSS > cmp.Or(c.rss, rssLimit):
			t.Errorf("%s: peak RSS %d MB, over %d MB", c.name, r.MaxRSS>>20, cmp.Or(c.rss, rssLimit)>>20)
			ok = false
		}
		if c.rss == 0 && r.MaxRSS > peak {
			peak, peakCase = r.MaxRSS, c.name
		}
		if c.rss != 0 {
			hugeRSS = r.MaxRSS
		}
		if r.TreeRSS > treePeak {
			treePeak, treeCase = r.TreeRSS, c.name
		}
		if ok {
			passed++
		}
	}
	after := snapshot(t, home)
	changed := diffSnapshots(before, after)
	for _, d := range changed {
		t.Errorf("installed state changed: %s", d)
	}
	// The installed skills still work.
	for _, args := range [][]string{{"call", "crashy.work", `{"i":1}`}, {"call", "script_run", jsonArgs("scripty", "hello")}} {
		if c := parseCall(t, must(t, environ, args...)); !c.Success {
			t.Errorf("%q no longer works", args)
		}
	}
	checkHome(t, home)
	result("hostile-input", "%d hostile inputs (%d name/path, %d symlink, 4 size, 6 NUL/oversized-argument): %d gave a clear error (or a warned truncation) with exit 1 or 2; peak agent RSS %d MB (%s), limit %d MB, and %d MB for the 50 MB SKILL.md clone, limit %d MB (with the plugins and scripts it waited for: %d MB, %s); %d changes to the installed skills",
		len(cases), len(cases)-len(symlinkCases)-10, len(symlinkCases), passed, peak>>20, peakCase, rssLimit>>20, hugeRSS>>20, hugeRSSLimit>>20, treePeak>>20, treeCase, len(changed))
}

func jsonArgs(skill, script string) string {
	return fmt.Sprintf(`{"skill_name":%q,"script_name":%q}`, skill, script)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// snapshot maps every file under home's skills/ and plugins/ (but the lock)
// to its sha256, and registry.json to its bytes' hash.
func snapshot(t testing.TB, home string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, dir := range []string{"skills", "plugins"} {
		root := filepath.Join(home, dir)
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(home, p)
			if d.IsDir() || rel == filepath.Join("skills", ".lock") {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				m[rel] = "link:" + target
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				m[rel] = "unreadable"
				return nil
			}
			sum := sha256.Sum256(b)
			m[rel] = hex.EncodeToString(sum[:])
			return nil
		})
	}
	return m
}

func diffSnapshots(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, k+" removed")
		} else if w != v {
			out = append(out, k+" changed")
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+" added")
		}
	}
	sort.Strings(out)
	return out
}
