package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

func skillMD(name string, extra ...string) string {
	return "---\nname: " + name + "\ndescription: The " + name + " skill\n" + strings.Join(extra, "\n") + "\n---\n# " + name + "\n"
}

// newStore returns a store in a temp AGENT_HOME whose clone retries do not
// sleep.
func newStore(t *testing.T) *Store {
	t.Helper()
	s := NewStore(filepath.Join(t.TempDir(), "home"))
	s.Git = &gitsrc.GoGit{Sleep: func(context.Context, time.Duration) error { return nil }}
	return s
}

func add(t *testing.T, s *Store, source string, mod func(*AddRequest), prep Prepare) (Entry, error) {
	t.Helper()
	src, err := gitsrc.ParseSource(source)
	if err != nil {
		t.Fatalf("ParseSource(%q): %v", source, err)
	}
	req := AddRequest{Source: src, Trusted: true, AgentVersion: "0.5.0"}
	if mod != nil {
		mod(&req)
	}
	return NewPipeline(s).Add(context.Background(), req, prep)
}

func mustAdd(t *testing.T, s *Store, source string, mod func(*AddRequest), prep Prepare) Entry {
	t.Helper()
	e, err := add(t, s, source, mod, prep)
	if err != nil {
		t.Fatalf("Add(%s): %v", source, err)
	}
	return e
}

// buildPrep stands in for the CLI's Prepare: it "builds" a plugin binary
// into PluginOut and describes one tool.
func buildPrep(_ context.Context, st *Staged) error {
	data := []byte("#!/bin/sh\necho " + st.CommitSHA + "\n")
	if err := os.WriteFile(st.PluginOut, data, 0o755); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	st.Plugin = &Plugin{Path: st.PluginOut, SHA256: hex.EncodeToString(sum[:])}
	st.Tools = []Tool{{Name: "hello", Description: "says hello", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	return nil
}

// tree lists every path under dir with file contents, for before/after
// comparisons.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		case d.IsDir():
			out[rel+"/"] = ""
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assertConsistent checks the invariants every writer must leave: no
// staging leftovers, a skill folder for each entry and none without, and
// plugin binaries only where an entry points.
func assertConsistent(t *testing.T, s *Store) []Entry {
	t.Helper()
	entries, err := s.List()
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if ents, _ := os.ReadDir(s.tmpDir()); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("leftovers in .tmp: %v", names)
	}
	want := map[string]bool{}
	for _, e := range entries {
		want[e.Canonical] = true
		if fi, err := os.Stat(e.Path); err != nil || !fi.IsDir() {
			t.Errorf("entry %s: folder %s missing: %v", e.Canonical, e.Path, err)
		}
		if _, err := os.Stat(filepath.Join(e.Path, ".git")); err == nil {
			t.Errorf("entry %s: installed folder has .git", e.Canonical)
		}
		if e.Plugin != nil {
			if _, err := os.Stat(e.Plugin.Path); err != nil {
				t.Errorf("entry %s: plugin %s missing", e.Canonical, e.Plugin.Path)
			}
		}
	}
	ents, _ := os.ReadDir(s.SkillsDir())
	for _, d := range ents {
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") && !want[d.Name()] {
			t.Errorf("folder skills/%s has no entry", d.Name())
		}
		if strings.HasPrefix(d.Name(), ".registry.json.tmp") {
			t.Errorf("leftover %s", d.Name())
		}
	}
	var plugins []string
	_ = filepath.WalkDir(s.PluginsDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			plugins = append(plugins, p)
		}
		return nil
	})
	for _, p := range plugins {
		ok := false
		for _, e := range entries {
			ok = ok || (e.Plugin != nil && e.Plugin.Path == p)
		}
		if !ok {
			t.Errorf("plugin %s belongs to no entry", p)
		}
	}
	return entries
}

func TestAddTransports(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{
		"SKILL.md":          skillMD("Hello_World", "version: 0.3.0"),
		"scripts/status.py": "print('ok')\n",
		"README.md":         "readme\n",
	})
	sha := repo.Commit(t, map[string]string{"docs/README.md": "docs\n"}, "add docs")
	tests := []struct {
		name, source string
	}{
		{name: "http", source: gittest.ServeRepo(t, repo)},
		{name: "file url", source: repo.FileURL()},
		{name: "local path", source: repo.Dir()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			var progress strings.Builder
			e := mustAdd(t, s, tt.source, func(r *AddRequest) { r.Progress = &progress }, buildPrep)
			if e.Name != "Hello_World" || e.Canonical != "hello-world" || e.CommitSHA != sha || e.Version != "0.3.0" ||
				e.Source != SourceGit || !e.Trusted || e.Subdir != "" || e.Path != filepath.Join(s.SkillsDir(), "hello-world") {
				t.Errorf("entry = %+v", e)
			}
			if e.Plugin == nil || e.Plugin.Path != filepath.Join(s.PluginsDir(), "hello-world", sha, "hello-world") || len(e.Tools) != 1 {
				t.Errorf("plugin = %+v, tools = %+v", e.Plugin, e.Tools)
			}
			got := tree(t, e.Path)
			want := map[string]string{".": "", "SKILL.md": skillMD("Hello_World", "version: 0.3.0"), "scripts/": "",
				"scripts/status.py": "print('ok')\n", "README.md": "readme\n", "docs/": "", "docs/README.md": "docs\n"}
			delete(got, "./")
			delete(want, ".")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("installed tree = %v\nwant %v", got, want)
			}
			if g, err := s.Get("HELLO_world"); err != nil || g.CommitSHA != sha {
				t.Errorf("Get = %+v, %v", g, err)
			}
			if _, _, err := LoadInstalled(e); err != nil || e.ManifestSHA256 == "" {
				t.Errorf("LoadInstalled with recorded hash %q: %v", e.ManifestSHA256, err)
			}
			assertConsistent(t, s)
		})
	}
}

func TestAddPicksSkill(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{
		"alpha/SKILL.md":                   skillMD("alpha"),
		"skills/beta/SKILL.md":             skillMD("Beta_Skill"),
		"plugins/p/skills/gamma/SKILL.md":  skillMD("gamma"),
		"deep/nested/ignored/SKILL.md":     skillMD("ignored"),
		"skills/beta/references/notes.txt": "n",
	})
	url := repo.FileURL()
	tests := []struct {
		name, selector, wantCanonical, wantSubdir string
	}{
		{name: "top folder", selector: "alpha", wantCanonical: "alpha", wantSubdir: "alpha"},
		{name: "manifest name", selector: "beta-skill", wantCanonical: "beta-skill", wantSubdir: "skills/beta"},
		{name: "folder name", selector: "beta", wantCanonical: "beta-skill", wantSubdir: "skills/beta"},
		{name: "plugin skill", selector: "GAMMA", wantCanonical: "gamma", wantSubdir: "plugins/p/skills/gamma"},
		{name: "path", selector: "plugins/p/skills/gamma", wantCanonical: "gamma", wantSubdir: "plugins/p/skills/gamma"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			e := mustAdd(t, s, url, func(r *AddRequest) { r.Skill = tt.selector }, nil)
			if e.Canonical != tt.wantCanonical || e.Subdir != tt.wantSubdir {
				t.Errorf("got %s from %s; want %s from %s", e.Canonical, e.Subdir, tt.wantCanonical, tt.wantSubdir)
			}
			assertConsistent(t, s)
		})
	}
	t.Run("rename", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		e := mustAdd(t, s, url, func(r *AddRequest) { r.Skill = "alpha"; r.Name = "My_Alpha" }, nil)
		if e.Canonical != "my-alpha" || e.Name != "My_Alpha" {
			t.Errorf("entry = %+v", e)
		}
	})
}

func TestAddErrorsLeaveNothing(t *testing.T) {
	t.Parallel()
	tags := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("tagged")})
	tags.Tag(t, "v1.0.0")
	tags.Commit(t, map[string]string{"x": "1"}, "x")
	tags.Tag(t, "v1.1.0")

	multi := gittest.NewRepo(t, map[string]string{"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b")})
	none := gittest.NewRepo(t, map[string]string{"README.md": "no skills"})
	invalid := gittest.NewRepo(t, map[string]string{"SKILL.md": "---\nname: bad/name\n---\n"})
	linked := gittest.NewRepo(t, map[string]string{"real.md": skillMD("linked")})
	linked.Symlink(t, "SKILL.md", "real.md")
	linked.Commit(t, nil, "link")
	escape := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("escape")})
	escape.Symlink(t, "passwd", "/etc/passwd")
	escape.Commit(t, nil, "escape")
	escapeRel := gittest.NewRepo(t, map[string]string{"s/SKILL.md": skillMD("escrel"), "secret": "s"})
	escapeRel.Symlink(t, "s/secret", "../secret")
	escapeRel.Commit(t, nil, "escape")
	inner := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("inner"), "README.md": "r"})
	inner.Symlink(t, "docs-link", "README.md")
	inner.Commit(t, nil, "inner link")
	// The plugin folder is a link out of the repository: it must be
	// refused before prep builds anything.
	pluginOut := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("plugout", "plugin:\n  build: ./plugin")})
	pluginOut.Symlink(t, "plugin", t.TempDir())
	pluginOut.Commit(t, nil, "plugin link")
	var prepped atomic.Int32
	countPrep := func(ctx context.Context, st *Staged) error { prepped.Add(1); return buildPrep(ctx, st) }
	t.Cleanup(func() {
		if n := prepped.Load(); n != 0 {
			t.Errorf("prep ran %d times for a skill with a symbolic link", n)
		}
	})
	incompatible := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("old", "max_agent_version: 0.1.0")})
	good := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("good")})
	empty := gittest.NewRepo(t, nil)

	// A port with nothing listening: connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/r.git"
	ln.Close()
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(auth.Close)

	failPrep := func(_ context.Context, st *Staged) error {
		if err := os.WriteFile(st.PluginOut, []byte("bin"), 0o755); err != nil {
			return err
		}
		return errors.New("go build failed")
	}
	// The staged folder is moved, not copied, after prep: a link prep
	// leaves in it must still be refused.
	linkPrep := func(_ context.Context, st *Staged) error {
		return os.Symlink("/etc/passwd", filepath.Join(st.SkillDir, "passwd"))
	}
	outsidePrep := func(_ context.Context, st *Staged) error {
		st.Plugin = &Plugin{Path: "/bin/sh"}
		return nil
	}

	tests := []struct {
		name    string
		source  string
		mod     func(*AddRequest)
		prep    Prepare
		setup   func(t *testing.T, s *Store)
		wantErr error
		wantMsg string
		sleeps  int
	}{
		{name: "repo not found http", source: gittest.ServeRepo(t, good) + "-missing", wantErr: gitsrc.ErrRepoNotFound},
		{name: "repo not found file", source: "file://" + filepath.Join(t.TempDir(), "missing"), wantErr: gitsrc.ErrRepoNotFound},
		{name: "not a repo", source: t.TempDir(), wantErr: gitsrc.ErrRepoNotFound},
		{name: "unreachable", source: closed, wantErr: gitsrc.ErrUnreachable, sleeps: 2, wantMsg: "3 tries"},
		{name: "auth required", source: auth.URL + "/r.git", wantErr: gitsrc.ErrAuthRequired},
		{name: "empty repo", source: empty.FileURL(), wantErr: gitsrc.ErrNoSkill},
		{name: "ref not found", source: tags.FileURL() + "@nope", wantErr: gitsrc.ErrRefNotFound, wantMsg: "v1.1.0"},
		{name: "no matching version", source: tags.FileURL() + "@^2", wantErr: gitsrc.ErrNoMatchingVersion, wantMsg: "1.1.0, 1.0.0"},
		{name: "no skill", source: none.FileURL(), wantErr: gitsrc.ErrNoSkill, wantMsg: "skills/*/SKILL.md"},
		{name: "ambiguous", source: multi.FileURL(), wantErr: gitsrc.ErrAmbiguousSkill, wantMsg: "a (a), b (b)"},
		{name: "wrong selector", source: multi.FileURL(), mod: func(r *AddRequest) { r.Skill = "c" }, wantErr: gitsrc.ErrNoSkill, wantMsg: "found: a (a), b (b)"},
		{name: "invalid manifest", source: invalid.FileURL(), wantErr: manifest.ErrInvalidManifest, wantMsg: "SKILL.md:2"},
		{name: "symlinked SKILL.md", source: linked.FileURL(), wantErr: manifest.ErrInvalidManifest, wantMsg: "symbolic link"},
		{name: "absolute symlink", source: escape.FileURL(), wantErr: ErrLink, wantMsg: "passwd is a symbolic link to /"},
		{name: "relative symlink escape", source: escapeRel.FileURL(), wantErr: ErrLink, wantMsg: "outside the skill"},
		{name: "symlink inside", source: inner.FileURL(), prep: countPrep, wantErr: ErrLink, wantMsg: "docs-link is a symbolic link to README.md"},
		{name: "plugin folder links out", source: pluginOut.FileURL(), prep: countPrep, wantErr: ErrLink, wantMsg: "plugin is a symbolic link"},
		{name: "incompatible", source: incompatible.FileURL(), wantErr: manifest.ErrIncompatible, wantMsg: "0.5.0"},
		{name: "prepare fails", source: good.FileURL(), prep: failPrep, wantMsg: "go build failed"},
		{name: "prepare plugin outside", source: good.FileURL(), prep: outsidePrep, wantMsg: "neither"},
		{name: "prep leaves a link", source: good.FileURL(), prep: linkPrep, wantMsg: "not a regular file"},
		{name: "bad name flag", source: good.FileURL(), mod: func(r *AddRequest) { r.Name = "../x" }, wantErr: manifest.ErrInvalidName},
		{name: "command transport", source: good.FileURL(), mod: func(r *AddRequest) { r.Source = gitsrc.Source{Raw: "ext::sh", URL: "ext::sh -c id"} }, wantErr: gitsrc.ErrUnsupportedSource},
		{name: "ref and constraint", source: good.FileURL(), mod: func(r *AddRequest) { r.Source.Ref = "main"; r.Source.Constraint = "^1" }, wantErr: gitsrc.ErrUnsupportedSource},
		{name: "already installed", source: good.FileURL(), wantErr: ErrAlreadyInstalled, wantMsg: "agent skill update good",
			setup: func(t *testing.T, s *Store) { mustAdd(t, s, good.FileURL(), nil, buildPrep) }},
		{name: "already installed by name", source: multi.FileURL(), mod: func(r *AddRequest) { r.Skill = "a"; r.Name = "GOOD" }, wantErr: ErrAlreadyInstalled,
			setup: func(t *testing.T, s *Store) { mustAdd(t, s, good.FileURL(), nil, buildPrep) }},
		{name: "canceled", source: good.FileURL(), mod: func(r *AddRequest) {}, wantErr: context.Canceled, prep: func(ctx context.Context, st *Staged) error {
			return context.Canceled
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			var sleeps atomic.Int32
			s.Git = &gitsrc.GoGit{Sleep: func(context.Context, time.Duration) error { sleeps.Add(1); return nil }}
			if tt.setup != nil {
				tt.setup(t, s)
			}
			before := tree(t, s.Home)
			_, err := add(t, s, tt.source, tt.mod, tt.prep)
			if err == nil {
				t.Fatal("Add succeeded; want an error")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("Add error = %v; want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Add error = %q; want it to mention %q", err, tt.wantMsg)
			}
			if int(sleeps.Load()) != tt.sleeps {
				t.Errorf("slept %d times; want %d", sleeps.Load(), tt.sleeps)
			}
			after := tree(t, s.Home)
			delete(after, filepath.Join("skills", ".tmp")+"/") // the staging root itself may stay
			delete(after, filepath.Join("skills", ".lock"))
			delete(after, "skills/")
			delete(after, "./")
			delete(before, "./")
			delete(before, filepath.Join("skills", ".tmp")+"/")
			delete(before, filepath.Join("skills", ".lock"))
			delete(before, "skills/")
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("home changed:\nbefore %v\nafter  %v", keys(before), keys(after))
			}
			assertConsistent(t, s)
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestAddSkillsBatch: several skills from one fetch are committed in one
// registry write, in selection order; the first that cannot be staged or
// moved ends the batch, the ones before it stay installed and are
// returned with its error, and nothing of it or after it is left behind.
func TestAddSkillsBatch(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{
		"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b"), "c/SKILL.md": skillMD("c"),
		"twin/SKILL.md": skillMD("a"), "a/scripts/run.py": "print('a')\n",
	})
	failB := func(ctx context.Context, st *Staged) error {
		if st.Canonical == "b" {
			return errors.New("go build failed")
		}
		return buildPrep(ctx, st)
	}
	tests := []struct {
		name     string
		skills   []string
		prep     Prepare
		setup    func(t *testing.T, s *Store)
		want     []string // installed by this add, in order
		wantErr  error
		wantMsg  string
		leftover string // a folder the test made, removed before the consistency check
	}{
		{name: "all three", skills: []string{"a", "b", "c"}, prep: buildPrep, want: []string{"a", "b", "c"}},
		{name: "prep fails in the middle", skills: []string{"a", "b", "c"}, prep: failB, want: []string{"a"}, wantMsg: "go build failed"},
		{name: "already installed in the middle", skills: []string{"a", "b", "c"}, prep: buildPrep,
			setup: func(t *testing.T, s *Store) {
				mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "b" }, buildPrep)
			},
			want: []string{"a"}, wantErr: ErrAlreadyInstalled},
		{name: "one name twice in the batch", skills: []string{"a", "twin", "c"}, prep: buildPrep, want: []string{"a"}, wantErr: ErrAlreadyInstalled},
		{name: "folder taken in the middle", skills: []string{"a", "b", "c"}, prep: buildPrep,
			setup: func(t *testing.T, s *Store) {
				if err := os.MkdirAll(s.skillDir("b"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"a"}, wantMsg: "exists but is not in the registry", leftover: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			if tt.setup != nil {
				tt.setup(t, s)
			}
			before, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			writes := 0
			s.hook = func(point string) {
				if point == "registry:before-rename" {
					writes++
				}
			}
			src, _ := gitsrc.ParseSource(repo.FileURL())
			got, err := NewPipeline(s).AddSkills(context.Background(), AddRequest{Source: src, Skills: tt.skills, Trusted: true, AgentVersion: "0.5.0"}, tt.prep)
			switch {
			case tt.wantErr == nil && tt.wantMsg == "" && err != nil:
				t.Fatalf("AddSkills: %v", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("AddSkills error = %v, want %v", err, tt.wantErr)
			case tt.wantMsg != "" && (err == nil || !strings.Contains(err.Error(), tt.wantMsg)):
				t.Fatalf("AddSkills error = %v, want one saying %q", err, tt.wantMsg)
			}
			var names []string
			for _, e := range got {
				names = append(names, e.Canonical)
			}
			if !slices.Equal(names, tt.want) {
				t.Fatalf("AddSkills returned %v, want %v", names, tt.want)
			}
			if writes != 1 {
				t.Errorf("the add wrote the registry %d times, want once", writes)
			}
			if tt.leftover != "" {
				if err := os.Remove(s.skillDir(tt.leftover)); err != nil {
					t.Fatalf("the folder the test made is gone or changed: %v", err)
				}
			}
			entries := assertConsistent(t, s)
			if len(entries) != len(before)+len(tt.want) {
				t.Fatalf("%d entries after the add, want %d + %d", len(entries), len(before), len(tt.want))
			}
			for _, name := range tt.want {
				e, err := s.Get(name)
				if err != nil {
					t.Fatal(err)
				}
				if e.Plugin == nil || e.DirHash == "" {
					t.Errorf("%s: entry without plugin or hash: %+v", name, e)
				}
				if err := s.CheckIntegrity(e); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if _, err := os.Stat(integrityRecords(s.Home).path(name)); err != nil {
					t.Errorf("%s: no integrity record: %v", name, err)
				}
			}
		})
	}
}
