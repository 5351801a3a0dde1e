package registry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

func TestRemoveAndTrust(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("B_b")})
	s := newStore(t)
	ea := mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "a" }, buildPrep)
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "b"; r.Trusted = false }, buildPrep)

	e, err := s.SetTrusted("b_B", true)
	if err != nil || !e.Trusted {
		t.Fatalf("SetTrusted = %+v, %v", e, err)
	}
	if g, _ := s.Get("b-b"); !g.Trusted {
		t.Error("trust not saved")
	}
	if _, err := s.SetTrusted("zzz", true); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "installed: a, b-b") {
		t.Errorf("SetTrusted(zzz) = %v; want ErrNotFound listing installed skills", err)
	}

	got, err := s.Remove(context.Background(), "A")
	if err != nil || got.Canonical != "a" {
		t.Fatalf("Remove = %+v, %v", got, err)
	}
	if _, err := os.Stat(ea.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("folder still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.PluginsDir(), "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("plugin still there: %v", err)
	}
	if _, err := s.Get("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after remove = %v", err)
	}
	if _, err := s.Remove(context.Background(), "a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Remove = %v; want ErrNotFound", err)
	}
	if entries := assertConsistent(t, s); len(entries) != 1 || entries[0].Canonical != "b-b" {
		t.Errorf("entries = %+v", entries)
	}
}

func TestCorruptRegistry(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("c")})
	tests := []struct{ name, content string }{
		{name: "garbage", content: "{not json"},
		{name: "truncated", content: `{"version":1,"skills":[{"name":"a"`},
		{name: "empty", content: ""},
		{name: "bad canonical", content: `{"version":1,"skills":[{"name":"x","canonical":"../x"}]}`},
		{name: "duplicate", content: `{"version":1,"skills":[{"canonical":"a"},{"canonical":"a"}]}`},
		{name: "newer format", content: `{"version":9,"skills":[]}`},
		{name: "trailing data", content: `{"version":1,"skills":[]} {}`},
		{name: "null", content: "null\n"},
		{name: "empty object", content: "{}"},
		{name: "no skills", content: `{"version":1}`},
		{name: "null skills", content: `{"version":1,"skills":null}`},
		{name: "skills not a list", content: `{"version":1,"skills":{}}`},
		{name: "no version", content: `{"skills":[]}`},
		{name: "version zero", content: `{"version":0,"skills":[]}`},
		{name: "version wrong type", content: `{"version":"1","skills":[]}`},
		{name: "array", content: `[]`},
		{name: "entry wrong type", content: `{"version":1,"skills":[{"canonical":"a","trusted":"yes"}]}`},
		{name: "path outside", content: `{"version":1,"skills":[{"canonical":"a","path":"/etc"}]}`},
		{name: "path missing", content: `{"version":1,"skills":[{"canonical":"a"}]}`},
		{name: "path traversal", content: `{"version":1,"skills":[{"canonical":"a","path":"HOME/skills/a/../../x"}]}`},
		{name: "plugin outside", content: `{"version":1,"skills":[{"canonical":"a","path":"HOME/skills/a","plugin":{"path":"/bin/sh","sha256":"00"}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			if err := os.MkdirAll(s.SkillsDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			content := strings.ReplaceAll(tt.content, "HOME", s.Home)
			if err := os.WriteFile(s.RegistryPath(), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			// A built plugin and a skill folder no entry names: reading the
			// registry as empty would let recovery delete them.
			canary := filepath.Join(s.PluginsDir(), "a", "0123", "a")
			if err := os.MkdirAll(filepath.Dir(canary), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(canary, []byte("bin"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(s.SkillsDir(), "a"), 0o755); err != nil {
				t.Fatal(err)
			}
			calls := map[string]func() error{
				"List":       func() error { _, err := s.List(); return err },
				"Get":        func() error { _, err := s.Get("a"); return err },
				"SetTrusted": func() error { _, err := s.SetTrusted("a", true); return err },
				"Remove":     func() error { _, err := s.Remove(context.Background(), "a"); return err },
				"Add":        func() error { _, err := add(t, s, repo.FileURL(), nil, nil); return err },
				"Update":     func() error { _, err := NewPipeline(s).Update(context.Background(), UpdateRequest{}, nil); return err },
			}
			for name, call := range calls {
				err := call()
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), s.RegistryPath()) {
					t.Errorf("%s = %v; want ErrCorrupt naming the file", name, err)
				}
			}
			if b, _ := os.ReadFile(s.RegistryPath()); string(b) != content {
				t.Errorf("registry was rewritten: %q", b)
			}
			if b, err := os.ReadFile(canary); err != nil || string(b) != "bin" {
				t.Errorf("built plugin touched: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(s.SkillsDir(), "a")); err != nil {
				t.Errorf("skill folder touched: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s.SkillsDir(), "c")); err == nil {
				t.Error("Add left a folder")
			}
		})
	}
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	entries, err := s.List()
	if err != nil || len(entries) != 0 {
		t.Fatalf("List = %v, %v", entries, err)
	}
	if _, err := s.Get("x"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "agent skill add") {
		t.Errorf("Get = %v", err)
	}
	if _, err := s.Get("../x"); !errors.Is(err, manifest.ErrInvalidName) {
		t.Errorf("Get(../x) = %v; want ErrInvalidName", err)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	entries := []Entry{
		{Canonical: "zeta", Trusted: true, Origin: Origin{Source: SourceGit}},
		{Canonical: "alpha", Trusted: false, Origin: Origin{Source: SourceGit}},
		{Canonical: "skill-authoring", Trusted: true, Origin: Origin{Source: SourceBundled}},
		{Canonical: "b-c", Trusted: true, Origin: Origin{Source: SourceGit}},
		{Canonical: "over", Trusted: true, Origin: Origin{Source: SourceBundled}},
		// No installed skill takes a bundled name (SPEC §5), trusted or
		// not, before the bundled entry or after it.
		{Canonical: "over", Trusted: false, Name: "installed", Origin: Origin{Source: SourceGit}},
		{Canonical: "mine", Trusted: true, Name: "installed", Origin: Origin{Source: SourceGit}},
		{Canonical: "mine", Trusted: true, Name: "bundled", Origin: Origin{Source: SourceBundled}},
		{Canonical: "base", Trusted: true, NamedOnly: true, Origin: Origin{Source: SourceBundled}},
	}
	tests := []struct {
		spec      string
		want      []string
		wantWarns []string
	}{
		{spec: "", want: nil},
		{spec: "none", want: nil},
		{spec: "NONE", want: nil},
		{spec: "all", want: []string{"b-c", "mine", "over", "skill-authoring", "zeta"}},
		{spec: "All", want: []string{"b-c", "mine", "over", "skill-authoring", "zeta"}},
		{spec: "all-untrusted", want: []string{"alpha", "b-c", "mine", "over", "skill-authoring", "zeta"}},
		{spec: "ZETA, B_c", want: []string{"b-c", "zeta"}},
		{spec: "skill_Authoring", want: []string{"skill-authoring"}},
		{spec: "alpha,nope,zeta", want: []string{"zeta"}, wantWarns: []string{"agent skill trust alpha", "not installed"}},
		{spec: "../x", want: nil, wantWarns: []string{"not a valid skill name"}},
		{spec: "over", want: []string{"over"}},
		{spec: "mine", want: []string{"mine"}},
		{spec: "base,zeta", want: []string{"base", "zeta"}}, // named only: active when named
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			active, warns := Select(entries, tt.spec)
			var got []string
			for _, e := range active {
				got = append(got, e.Canonical)
				if want := map[string]string{"over": SourceBundled, "mine": SourceBundled}[e.Canonical]; want != "" && e.Source != want {
					t.Errorf("Select(%q) picked the %s %s; want the %s one", tt.spec, e.Source, e.Canonical, want)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Select(%q) = %v; want %v", tt.spec, got, tt.want)
			}
			if len(warns) != len(tt.wantWarns) {
				t.Fatalf("warnings = %q; want %d", warns, len(tt.wantWarns))
			}
			for i, w := range tt.wantWarns {
				if !strings.Contains(warns[i], w) {
					t.Errorf("warning %q does not contain %q", warns[i], w)
				}
			}
		})
	}
}

func TestRecoverIgnoresForeignLeftovers(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("keep")})
	s := newStore(t)
	e := mustAdd(t, s, repo.FileURL(), nil, nil)
	for _, name := range []string{".add.x", "..old.x", "KEEP.rm." + e.CommitSHA, "junk", "work-dead"} {
		p := filepath.Join(s.tmpDir(), name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.SetTrusted("keep", false); err != nil {
		t.Fatal(err)
	}
	if entries := assertConsistent(t, s); len(entries) != 1 {
		t.Fatalf("entries = %+v", entries)
	}
	if _, err := os.Stat(filepath.Join(e.Path, "SKILL.md")); err != nil {
		t.Fatalf("recovery removed the installed skill: %v", err)
	}
}
