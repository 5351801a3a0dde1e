package placement

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
)

// installed adds a real skill (a git repository read over file://) to a
// fresh store, trusted, with no plugin.
func installed(t *testing.T) (*registry.Store, registry.Entry) {
	t.Helper()
	return installedIn(t, t.TempDir())
}

// installedIn is installed with AGENT_HOME at home.
func installedIn(t *testing.T, home string) (*registry.Store, registry.Entry) {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{
		"SKILL.md":          "---\nname: notes\ndescription: Takes notes.\n---\nRun scripts/note.py.\n",
		"scripts/note.py":   "print('noted')\n",
		"references/a.md":   "# A\n",
		"references/b/c.md": "# C\n",
	})
	src, err := gitsrc.ParseSource(repo.FileURL())
	if err != nil {
		t.Fatal(err)
	}
	s := registry.NewStore(home)
	e, err := registry.NewPipeline(s).Add(context.Background(), registry.AddRequest{Source: src, Trusted: true},
		func(context.Context, *registry.Staged) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if e.DirHash == "" {
		t.Fatal("no h1: hash recorded at add")
	}
	return s, e
}

// TestAgentRows places a skill for every agent of the table, in its
// project folder and in its user folder, and checks the copy, that the
// agent reads where it went, that verify passes, and that removing it
// leaves nothing.
func TestAgentRows(t *testing.T) {
	s, e := installed(t)
	if len(Agents()) < 20 {
		t.Fatalf("the table has %d agents", len(Agents()))
	}
	for _, a := range Agents() {
		t.Run(a.Name, func(t *testing.T) {
			// npx skills knows a few agents with no user folder (eve,
			// promptscript) or that it never detects (universal).
			if a.Display == "" || len(a.Project) == 0 || (!a.Unverified && (len(a.User) == 0 || len(a.Detect) == 0)) {
				t.Fatalf("incomplete row: %+v", a)
			}
			for _, global := range []bool{false, true} {
				if global && len(a.User) == 0 {
					continue
				}
				env := Env{Home: t.TempDir(), Project: t.TempDir()}
				if env.Detected(a) {
					t.Fatal("detected in empty folders")
				}
				if len(a.Detect) > 0 {
					if err := os.MkdirAll(env.Resolve(a.Detect[0]), 0o755); err != nil {
						t.Fatal(err)
					}
					if !env.Detected(a) {
						t.Fatalf("not detected with %s present", a.Detect[0])
					}
					got, err := Lookup("detected", env)
					if err != nil || !slices.ContainsFunc(got, func(b Agent) bool { return b.Name == a.Name }) {
						t.Fatalf("--agent detected = %v, %v", got, err)
					}
				}
				m := &Manager{Store: s, Env: env}
				ne, err := m.Add(e, []Agent{a}, global, false)
				if err != nil {
					t.Fatal(err)
				}
				if len(ne.Placements) != 1 {
					t.Fatalf("placements %+v", ne.Placements)
				}
				p := ne.Placements[0]
				if want := a.Folders(global)[0]; p.Folder != want || !a.Reads(p.Folder, global) {
					t.Fatalf("placed in %s, want %s", p.Folder, want)
				}
				root := env.Project
				if global {
					root = env.Home
					if !strings.HasPrefix(p.Folder, "~/") {
						t.Fatalf("user folder %q is not under ~/", p.Folder)
					}
				}
				dst := Path(ne, p)
				if !strings.HasPrefix(dst, root+string(filepath.Separator)) {
					t.Fatalf("placed at %s, outside %s", dst, root)
				}
				sameFiles(t, e.Path, dst)
				for _, c := range m.Verify(ne) {
					if !c.OK() {
						t.Fatalf("verify: %+v", c)
					}
				}
				if err := m.Remove(ne); err != nil {
					t.Fatal(err)
				}
				if _, err := os.Lstat(dst); err == nil {
					t.Fatalf("%s left after remove", dst)
				}
				// Only the detect folder made above is left.
				left, _ := os.ReadDir(root)
				for _, l := range left {
					if !slices.ContainsFunc(a.Detect, func(d string) bool {
						return strings.SplitN(strings.TrimPrefix(d, "~/"), "/", 2)[0] == l.Name()
					}) {
						t.Fatalf("%s left in %s after remove", l.Name(), root)
					}
				}
				if _, err := s.SetPlacements(e.Canonical, nil); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// sameFiles checks that got holds exactly want's files, read-only.
func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	files := func(dir string) map[string]string {
		out := map[string]string{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				out[rel] = string(b)
			}
			if p != dir {
				fi, _ := d.Info()
				if dir == got && fi.Mode().Perm()&0o222 != 0 {
					t.Errorf("%s is writable: %v", p, fi.Mode())
				}
			}
			return nil
		})
		return out
	}
	w, g := files(want), files(got)
	if len(w) == 0 || len(w) != len(g) {
		t.Fatalf("%d files installed, %d placed", len(w), len(g))
	}
	for k, v := range w {
		if g[k] != v {
			t.Errorf("%s differs in the placement", k)
		}
	}
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name   string
		agents string
		global bool
		want   map[string][]string
	}{
		{"three folders", "claude-code,codex,windsurf", false,
			map[string][]string{".claude/skills": {"claude-code"}, ".agents/skills": {"codex"}, ".windsurf/skills": {"windsurf"}}},
		{"cursor keeps its own folder", "claude-code,codex,cursor", false,
			map[string][]string{".claude/skills": {"claude-code"}, ".agents/skills": {"codex"}, ".cursor/skills": {"cursor"}}},
		{"cursor keeps its own user folder", "claude-code,cursor", true,
			map[string][]string{"~/.claude/skills": {"claude-code"}, "~/.cursor/skills": {"cursor"}}},
		{"copilot first still shares", "github-copilot,claude-code", false,
			map[string][]string{".claude/skills": {"github-copilot", "claude-code"}}},
		{"one shared folder", "codex,amp,gemini-cli", false,
			map[string][]string{".agents/skills": {"codex", "amp", "gemini-cli"}}},
		{"user folders", "codex,gemini-cli", true,
			map[string][]string{"~/.agents/skills": {"codex", "gemini-cli"}}},
		{"antigravity apart from our .agent state", "antigravity", false,
			map[string][]string{".agent/skills": {"antigravity"}}},
		{"aliases", "claude,gemini", false,
			map[string][]string{".claude/skills": {"claude-code"}, ".gemini/skills": {"gemini-cli"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			agents, err := Lookup(tt.agents, Env{})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			for _, p := range Plan(agents, tt.global) {
				got[p.Folder] = p.Agents
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Plan = %v, want %v", got, tt.want)
			}
			for f, as := range tt.want {
				if !slices.Equal(got[f], as) {
					t.Fatalf("Plan = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestLookupErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"claud-code", `did you mean "claude-code"`},
		{"cursr", `did you mean "cursor"`},
		{"vim", "known agents: adal,"},
		{",", "--agent needs a name"},
		{"detected", "no agent is detected here"},
	} {
		_, err := Lookup(tt.in, Env{Home: t.TempDir(), Project: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Lookup(%q) = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// TestForeignFolder: a folder this host did not make is never
// overwritten, and the placement is not recorded; one holding exactly the
// installed files is adopted.
func TestForeignFolder(t *testing.T) {
	s, e := installed(t)
	env := Env{Home: t.TempDir(), Project: t.TempDir()}
	claude, _ := Lookup("claude-code", env)
	dst := filepath.Join(env.Project, ".claude", "skills", e.Canonical)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(dst, "SKILL.md")
	os.WriteFile(mine, []byte("---\nname: notes\ndescription: someone else's\n---\n"), 0o644)
	var warned []string
	m := &Manager{Store: s, Env: env, Warn: func(w string) { warned = append(warned, w) }}
	ne, err := m.Add(e, claude, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ne.Placements) != 0 || len(warned) != 1 || !strings.Contains(warned[0], "left alone") {
		t.Fatalf("placements %+v, warnings %q", ne.Placements, warned)
	}
	if b, _ := os.ReadFile(mine); !strings.Contains(string(b), "someone else's") {
		t.Fatal("the foreign SKILL.md was overwritten")
	}
	// The same files as the install: adopted, then ours to remove.
	os.RemoveAll(dst)
	if err := copyTree(e.Path, dst); err != nil {
		t.Fatal(err)
	}
	ne, err = m.Add(ne, claude, false, false)
	if err != nil || len(ne.Placements) != 1 || ne.Placements[0].Placed != e.DirHash {
		t.Fatalf("adopt: %+v, %v", ne.Placements, err)
	}
	if err := m.Remove(ne); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dst); err == nil {
		t.Fatal("adopted placement not removed")
	}
}

// TestAntigravityApartFromState places for Antigravity, which reads
// .agent/skills inside this host's own project state folder .agent/: the
// placement comes and goes without touching the state beside it, and where
// .agent is AGENT_HOME itself (a home folder used as the project) nothing
// is placed, so that no placement can be the install it copies.
func TestAntigravityApartFromState(t *testing.T) {
	ag, err := Lookup("antigravity", Env{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("beside the state", func(t *testing.T) {
		s, e := installed(t)
		env := Env{Home: t.TempDir(), Project: t.TempDir()}
		state := filepath.Join(env.Project, ".agent", "jobs", "j1", "state.json")
		if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(state, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		m := &Manager{Store: s, Env: env}
		ne, err := m.Add(e, ag, false, false)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(env.Project, ".agent", "skills", e.Canonical)
		if len(ne.Placements) != 1 || Path(ne, ne.Placements[0]) != dst {
			t.Fatalf("placements %+v; want one in %s", ne.Placements, dst)
		}
		if slices.Contains(ne.Placements[0].Made, filepath.Join(env.Project, ".agent")) {
			t.Fatalf("made %v: .agent was there already", ne.Placements[0].Made)
		}
		if err := m.Remove(ne); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(env.Project, ".agent", "skills")); err == nil {
			t.Fatal(".agent/skills left behind")
		}
		if _, err := os.Stat(state); err != nil {
			t.Fatalf("the state beside the placement: %v", err)
		}
	})
	t.Run("state made after the placement", func(t *testing.T) {
		s, e := installed(t)
		env := Env{Home: t.TempDir(), Project: t.TempDir()}
		m := &Manager{Store: s, Env: env}
		ne, err := m.Add(e, ag, false, false)
		if err != nil {
			t.Fatal(err)
		}
		todos := filepath.Join(env.Project, ".agent", "todos.json")
		if err := os.WriteFile(todos, []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := m.Remove(ne); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(todos); err != nil {
			t.Fatalf("removing the placement took the state with it: %v", err)
		}
	})
	t.Run("AGENT_HOME is the project's .agent", func(t *testing.T) {
		project := t.TempDir()
		s, e := installedIn(t, filepath.Join(project, ".agent"))
		if !strings.HasPrefix(e.Path, filepath.Join(project, ".agent", "skills")) {
			t.Fatalf("install at %s; the test needs it in .agent/skills", e.Path)
		}
		m := &Manager{Store: s, Env: Env{Home: project, Project: project}}
		_, err := m.Add(e, ag, false, false)
		if !errors.Is(err, ErrInStore) || !strings.Contains(err.Error(), "run the command from your project folder") {
			t.Fatalf("Add = %v; want ErrInStore with advice", err)
		}
		// A lock synced there carries the placement: it is dropped.
		var warned []string
		m.Warn = func(w string) { warned = append(warned, w) }
		e.Placements = []registry.Placement{{Folder: ".agent/skills", Dir: filepath.Join(project, ".agent", "skills"), Agents: []string{"antigravity"}}}
		ne, err := m.settle(e)
		if err != nil || len(ne.Placements) != 0 || len(warned) != 1 || !strings.Contains(warned[0], "inside agent's own store") {
			t.Fatalf("settle = %+v, %v, warnings %q", ne.Placements, err, warned)
		}
		if h, _, err := registry.HashSkill(e.Path); err != nil || h != e.DirHash {
			t.Fatalf("the install changed: %v", err)
		}
	})
}
