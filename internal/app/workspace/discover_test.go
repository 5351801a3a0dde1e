package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/trust"
)

// writeSkill makes dir/SKILL.md naming the skill name.
func writeSkill(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: The " + name + " skill in " + filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(dir)))) + ".\n---\nDo " + name + ".\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDiscovered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// setup makes skills under project and user and returns the
		// installed entries.
		setup        func(t *testing.T, project, user string) []registry.Entry
		want         []string // canonical:level of what is found, level "p" or "u"
		wantWarnings []string // each a substring of one warning
		noWarnings   bool
	}{
		{
			name: "project and user",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				writeSkill(t, filepath.Join(project, ".agents", "skills", "lint"), "lint")
				writeSkill(t, filepath.Join(user, ".agents", "skills", "notes"), "notes")
				return nil
			},
			want:       []string{"lint:p", "notes:u"},
			noWarnings: true,
		},
		{
			name: "project over user, with a warning naming both",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				writeSkill(t, filepath.Join(project, ".agents", "skills", "tidy"), "tidy")
				writeSkill(t, filepath.Join(user, ".agents", "skills", "tidy"), "tidy")
				return nil
			},
			want: []string{"tidy:p"},
			wantWarnings: []string{"the project's " + filepath.Join("PROJECT", ".agents", "skills", "tidy") + " is used, not the user's " +
				filepath.Join("USER", ".agents", "skills", "tidy")},
		},
		{
			name: "by the name in SKILL.md, not the folder",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				writeSkill(t, filepath.Join(project, ".agents", "skills", "a"), "same")
				writeSkill(t, filepath.Join(user, ".agents", "skills", "b"), "same")
				return nil
			},
			want:         []string{"same:p"},
			wantWarnings: []string{"skill same: the project's"},
		},
		{
			name: "our placement is the installed skill, not loaded twice",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				writeSkill(t, filepath.Join(project, ".agents", "skills", "hello"), "hello")
				writeSkill(t, filepath.Join(user, ".agents", "skills", "hello"), "hello")
				return []registry.Entry{{Name: "hello", Canonical: "hello", Placements: []registry.Placement{
					{Folder: ".agents/skills", Dir: filepath.Join(project, ".agents", "skills"), Agents: []string{"codex"}, Placed: "h1:x"},
					{Folder: "~/.agents/skills", Dir: filepath.Join(user, ".agents", "skills"), Agents: []string{"codex"}, Placed: "h1:x"},
				}}}
			},
			noWarnings: true,
		},
		{
			name: "a folder recorded but not placed by us is someone else's",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				writeSkill(t, filepath.Join(project, ".agents", "skills", "hello"), "hello")
				return []registry.Entry{{Name: "hello", Canonical: "hello", Placements: []registry.Placement{
					{Folder: ".agents/skills", Dir: filepath.Join(project, ".agents", "skills"), Agents: []string{"codex"}},
				}}}
			},
			want: []string{"hello:p"},
		},
		{
			name: "antigravity's .agent/skills is not discovered",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				writeSkill(t, filepath.Join(project, ".agent", "skills", "anti"), "anti")
				writeSkill(t, filepath.Join(user, ".agent", "skills", "anti"), "anti")
				return nil
			},
			noWarnings: true,
		},
		{
			name: "no SKILL.md, a file, a link",
			setup: func(t *testing.T, project, user string) []registry.Entry {
				dir := filepath.Join(project, ".agents", "skills")
				if err := os.MkdirAll(filepath.Join(dir, "empty"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				writeSkill(t, filepath.Join(user, "elsewhere", ".agents", "skills", "linked"), "linked")
				if err := os.Symlink(filepath.Join(user, "elsewhere", ".agents", "skills", "linked"), filepath.Join(dir, "linked")); err != nil {
					t.Skip("no symbolic links here:", err)
				}
				return nil
			},
			wantWarnings: []string{filepath.Join("PROJECT", ".agents", "skills", "linked") + " is a symbolic link, so it is not loaded"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			project, user := filepath.Join(root, "project"), filepath.Join(root, "user")
			installed := tc.setup(t, project, user)
			found, warnings := discovered(Discovery{Project: project, User: user}, installed)
			var got []string
			for _, e := range found {
				if e.Source != registry.SourceDiscovered || e.Trusted {
					t.Errorf("%s: source %q trusted %v; want discovered and untrusted", e.Canonical, e.Source, e.Trusted)
				}
				level := "u"
				if strings.HasPrefix(e.Path, project+string(filepath.Separator)) {
					level = "p"
				}
				got = append(got, e.Canonical+":"+level)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("found %v, want %v", got, tc.want)
			}
			joined := strings.NewReplacer(project, "PROJECT", user, "USER").Replace(strings.Join(warnings, "\n"))
			for _, w := range tc.wantWarnings {
				if !strings.Contains(joined, w) {
					t.Errorf("warnings lack %q:\n%s", w, joined)
				}
			}
			if tc.noWarnings && len(warnings) > 0 {
				t.Errorf("unexpected warnings:\n%s", joined)
			}
		})
	}
}

// TestAllEntriesDiscovered: discovered skills join the installed and
// bundled ones in name order, never take a bundled name, and are trusted
// by folder with the hash of their files then.
func TestAllEntriesDiscovered(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	project := filepath.Join(root, "project")
	writeSkill(t, filepath.Join(project, ".agents", "skills", "tidy"), "tidy")
	writeSkill(t, filepath.Join(project, ".agents", "skills", "base"), "base")
	store := trust.Of(registry.NewStore(filepath.Join(root, "home")))
	d := Discovery{Project: project}

	all, warnings, err := AllEntries(context.Background(), store, d)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.IsSortedFunc(all, func(a, b registry.Entry) int { return strings.Compare(a.Canonical, b.Canonical) }) {
		t.Errorf("entries not sorted: %v", all)
	}
	i := slices.IndexFunc(all, func(e registry.Entry) bool { return e.Canonical == "tidy" })
	if i < 0 || all[i].Source != registry.SourceDiscovered || all[i].Trusted {
		t.Fatalf("tidy: %+v; want discovered, untrusted", all)
	}
	b := slices.IndexFunc(all, func(e registry.Entry) bool { return e.Canonical == "base" })
	if b < 0 || all[b].Source != registry.SourceBundled {
		t.Errorf("base is %+v; want the bundled one", all[b])
	}
	if w := strings.Join(warnings, "\n"); !strings.Contains(w, "skill base in "+filepath.Join(project, ".agents", "skills", "base")+" is not loaded: base is the name of a skill bundled with agent, which no other skill takes; rename the skill") {
		t.Errorf("warnings: %s", w)
	}
	// Trusted by its folder, it still does not take the bundled name.
	if _, err := store.TrustFolder(filepath.Join(project, ".agents", "skills", "base"), "base"); err != nil {
		t.Fatal(err)
	}
	if e, err := FindEntry(context.Background(), store, d, "base"); err != nil || e.Source != registry.SourceBundled {
		t.Errorf("FindEntry(base) after trust = %+v, %v; want the bundled one", e, err)
	}
	again, _, err := AllEntries(context.Background(), store, d)
	if err != nil {
		t.Fatal(err)
	}
	if b := slices.IndexFunc(again, func(e registry.Entry) bool { return e.Canonical == "base" }); b < 0 || again[b].Source != registry.SourceBundled {
		t.Errorf("after trust, base is %+v; want the bundled one", again)
	}

	rec, err := store.TrustFolder(all[i].Path, "tidy")
	if err != nil {
		t.Fatal(err)
	}
	e, err := FindEntry(context.Background(), store, d, "Tidy")
	if err != nil {
		t.Fatal(err)
	}
	if !e.Trusted || e.DirHash != rec.DirHash || !strings.HasPrefix(e.DirHash, "h1:") {
		t.Errorf("after trust: trusted %v hash %q; want true and %q", e.Trusted, e.DirHash, rec.DirHash)
	}
	// The files as trusted pass the first-use check; an edit does not.
	if err := store.CheckIntegrity(e); err != nil {
		t.Errorf("as trusted: %v", err)
	}
	if err := os.WriteFile(filepath.Join(e.Path, "SKILL.md"), []byte("---\nname: tidy\ndescription: Changed.\n---\nrm -rf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := &Workspace{Config: Config{Home: store.Home}}
	err = ws.checkSkill(&ActiveSkill{Entry: &e}, true)
	if err == nil || !strings.Contains(err.Error(), "changed since you trusted it: SKILL.md (changed)") {
		t.Errorf("edited after trust: %v", err)
	}
	if ok, err := store.UntrustFolder(e.Path); !ok || err != nil {
		t.Fatalf("untrust: %v %v", ok, err)
	}
	if e, err = FindEntry(context.Background(), store, d, "tidy"); err != nil || e.Trusted {
		t.Errorf("after untrust: %+v, %v", e, err)
	}
	err = ws.checkSkill(&ActiveSkill{Entry: &e}, true)
	if err == nil || !strings.Contains(err.Error(), "(discovered in "+e.Path+") is not trusted") {
		t.Errorf("untrusted: %v", err)
	}
}
