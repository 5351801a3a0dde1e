package gitsrc

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentskills/agent/registry/manifest"
)

func skillFile(name string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: The " + name + " skill.\n---\nBody.\n")}
}

func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
}

func dirsOf(fs []Found) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Path())
	}
	return out
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		wantStep int
		want     []string
		wantErr  []string // paths found but invalid
	}{
		{name: "root skill wins", fsys: fstest.MapFS{
			"SKILL.md":          skillFile("root"),
			"skills/a/SKILL.md": skillFile("a"),
		}, wantStep: 1, want: []string{"."}},
		{name: "every step 2 location", fsys: fstest.MapFS{
			"top/SKILL.md":                          skillFile("top"),
			"skills/a/SKILL.md":                     skillFile("a"),
			"skills/.curated/b/SKILL.md":            skillFile("b"),
			"skills/.experimental/group/c/SKILL.md": skillFile("c"),
			"skills/.system/d/SKILL.md":             skillFile("d"),
			"plugins/p/skills/e/SKILL.md":           skillFile("e"),
			".claude/skills/f/SKILL.md":             skillFile("f"),
			".agents/skills/g/SKILL.md":             skillFile("g"),
			".cursor/skills/h/SKILL.md":             skillFile("h"),
			".claude-plugin/marketplace.json": {Data: []byte(`{"plugins": [
				{"name": "docs", "source": "./", "skills": ["./document-skills/xlsx", "./more"]},
				{"name": "remote", "source": {"source": "github", "repo": "o/r"}},
				{"name": "escape", "source": "../outside"},
				{"name": "abs", "source": "/etc"},
				{"name": "plug", "source": "./packs/p1"}
			]}`)},
			"document-skills/xlsx/SKILL.md":  skillFile("xlsx"),
			"more/one/SKILL.md":              skillFile("one"),
			"packs/p1/skills/inner/SKILL.md": skillFile("inner"),
			"deep/a/b/c/SKILL.md":            skillFile("not-in-step-2"),
		}, wantStep: 2, want: []string{
			".agents/skills/g", ".claude/skills/f", ".cursor/skills/h", "document-skills/xlsx", "more/one",
			"packs/p1/skills/inner", "plugins/p/skills/e", "skills/.curated/b", "skills/.experimental/group/c",
			"skills/.system/d", "skills/a", "top",
		}},
		{name: "plugin.json", fsys: fstest.MapFS{
			".claude-plugin/plugin.json": {Data: []byte(`{"name": "p", "skills": "./lib/skills"}`)},
			"lib/skills/x/SKILL.md":      skillFile("x"),
		}, wantStep: 2, want: []string{"lib/skills/x"}},
		{name: "full walk", fsys: fstest.MapFS{
			"examples/skills/hello/SKILL.md":       skillFile("hello"),
			"node_modules/pkg/skill/SKILL.md":      skillFile("no"),
			"vendor/a/b/SKILL.md":                  skillFile("no"),
			"a/b/c/d/e/f/SKILL.md":                 skillFile("six"),
			"a/b/c/d/e/f/g/SKILL.md":               skillFile("seven"),
			"docs/build/x/SKILL.md":                skillFile("no"),
			"pkg/testdata/fixture/SKILL.md":        skillFile("no"),
			"examples/skills/hello/sub/x/SKILL.md": skillFile("inside-a-skill"),
		}, wantStep: 3, want: []string{"a/b/c/d/e/f", "examples/skills/hello"}},
		{name: "links are not followed", fsys: fstest.MapFS{
			"skills/real/SKILL.md":    skillFile("real"),
			"skills/linked":           link("real"),
			"skills/badlink/SKILL.md": link("../real/SKILL.md"),
		}, wantStep: 2, want: []string{"skills/badlink", "skills/real"}, wantErr: []string{"skills/badlink"}},
		{name: "nothing", fsys: fstest.MapFS{"README.md": {Data: []byte("hi")}}, wantStep: 0, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Discover(tt.fsys, "repo")
			if err != nil {
				t.Fatal(err)
			}
			if d.Step != tt.wantStep {
				t.Errorf("Step = %d; want %d", d.Step, tt.wantStep)
			}
			if got := dirsOf(d.Skills); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("found %q;\nwant  %q", got, tt.want)
			}
			var bad []string
			for _, f := range d.Skills {
				if f.Err != nil {
					bad = append(bad, f.Path())
				}
			}
			if !reflect.DeepEqual(bad, tt.wantErr) {
				t.Errorf("invalid = %q; want %q", bad, tt.wantErr)
			}
		})
	}
}

func TestDiscoverSelect(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"skills/alpha/SKILL.md":          skillFile("alpha"),
		"skills/Beta_Skill/SKILL.md":     skillFile("Beta_Skill"),
		"skills/dup/SKILL.md":            skillFile("twin"),
		".claude/skills/dup/SKILL.md":    skillFile("twin"),
		"examples/skills/extra/SKILL.md": skillFile("extra"),
		"examples/skills/named/SKILL.md": skillFile("Display Name"),
		"skills/broken/SKILL.md":         {Data: []byte("---\nname: a/b\n---\n")},
	}
	tests := []struct {
		name    string
		sel     []string
		all     bool
		want    []string
		wantErr error
		errHas  []string
	}{
		{name: "by name", sel: []string{"alpha"}, want: []string{"skills/alpha"}},
		{name: "canonical name", sel: []string{"beta-skill"}, want: []string{"skills/Beta_Skill"}},
		{name: "case-insensitive", sel: []string{"ALPHA"}, want: []string{"skills/alpha"}},
		{name: "several", sel: []string{"alpha", "beta-skill", "alpha"}, want: []string{"skills/alpha", "skills/Beta_Skill"}},
		{name: "by path", sel: []string{".claude/skills/dup"}, want: []string{".claude/skills/dup"}},
		{name: "path outside the search", sel: []string{"examples/skills/extra/"}, want: []string{"examples/skills/extra"}},
		{name: "name found by the full walk", sel: []string{"extra"}, want: []string{"examples/skills/extra"}},
		{name: "display name", sel: []string{"Display Name"}, want: []string{"examples/skills/named"}},
		{name: "duplicate name lists both paths", sel: []string{"twin"}, wantErr: ErrAmbiguousSkill, errHas: []string{".claude/skills/dup", "skills/dup"}},
		{name: "all refuses duplicates", all: true, wantErr: ErrAmbiguousSkill, errHas: []string{`"twin" at .claude/skills/dup and skills/dup`}},
		{name: "none given", wantErr: ErrAmbiguousSkill, errHas: []string{"--all"}},
		{name: "unknown", sel: []string{"gamma"}, wantErr: ErrNoSkill, errHas: []string{"alpha (skills/alpha)"}},
		{name: "invalid", sel: []string{"skills/broken"}, wantErr: manifest.ErrInvalidManifest, errHas: []string{"skills/broken/SKILL.md:2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Discover(fsys, "repo")
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Select(tt.sel, tt.all, "example/repo")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Select = %v, %v; want %v", dirsOf(got), err, tt.wantErr)
				}
				for _, s := range tt.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q lacks %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := dirsOf(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("Select = %q; want %q", g, tt.want)
			}
		})
	}
}

// TestDiscoverDirFS runs discovery over a real folder through os.DirFS, as
// add does, with links on disk.
func TestDiscoverDirFS(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("skills/a/SKILL.md", "---\nname: a\ndescription: A.\n---\n")
	write("skills/.curated/b/SKILL.md", "---\ndescription: B.\n---\n")
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("---\nname: evil\ndescription: E.\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "skills", "evil")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	d, err := Discover(os.DirFS(root), "repo")
	if err != nil {
		t.Fatal(err)
	}
	if got := dirsOf(d.Skills); !reflect.DeepEqual(got, []string{"skills/.curated/b", "skills/a"}) {
		t.Fatalf("found %q", got)
	}
	if d.Skills[0].Manifest.Name != "b" || len(d.Skills[0].Warnings) == 0 {
		t.Errorf("skill without a name: %+v", d.Skills[0])
	}
	if _, err := d.Select([]string{"evil"}, false, "repo"); !errors.Is(err, ErrNoSkill) {
		t.Errorf("Select(evil) through a link = %v; want ErrNoSkill", err)
	}
}

func TestRepoName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://github.com/o/skills.git": "skills",
		"/home/me/src/my-skill":           "my-skill",
		"git@github.com:o/r.git":          "r",
		"file:///tmp/x/":                  "x",
	} {
		if got := RepoName(in); got != want {
			t.Errorf("RepoName(%q) = %q; want %q", in, got, want)
		}
	}
}

// FuzzDiscover builds a tree from the fuzzer's lines (each a path to a
// SKILL.md, a folder, or "marketplace:" followed by JSON) and checks that
// discovery never panics, never reports a path outside the tree, keeps its
// result sorted, and finds each skill again by its own path.
func FuzzDiscover(f *testing.F) {
	for _, s := range []string{
		"skills/a/SKILL.md\n.claude/skills/b/SKILL.md",
		"SKILL.md",
		"x/y/z/w/v/SKILL.md\nnode_modules/a/SKILL.md",
		`marketplace:{"plugins":[{"source":"./","skills":["./p/q","../x","/abs"]}]}` + "\np/q/SKILL.md",
		"skills/.curated/a/b/SKILL.md\nplugins/p/skills/s/SKILL.md",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		fsys := fstest.MapFS{}
		for _, line := range strings.Split(spec, "\n") {
			if j, ok := strings.CutPrefix(line, "marketplace:"); ok {
				fsys[".claude-plugin/marketplace.json"] = &fstest.MapFile{Data: []byte(j)}
				continue
			}
			p := strings.Trim(path.Clean("/"+line), "/")
			if p == "" || !fs.ValidPath(p) || strings.ContainsRune(p, 0) {
				continue
			}
			if path.Base(p) == manifest.ManifestFile {
				fsys[p] = skillFile(manifest.RecoverName(path.Base(path.Dir(p))) + "x")
			} else {
				fsys[p+"/.keep"] = &fstest.MapFile{}
			}
		}
		d, err := Discover(fsys, "repo")
		if err != nil {
			return
		}
		for i, fd := range d.Skills {
			if fd.Dir != "" && (!fs.ValidPath(fd.Dir) || fsys[fd.Dir+"/"+manifest.ManifestFile] == nil) {
				t.Fatalf("found %q, which holds no SKILL.md in the tree", fd.Dir)
			}
			if i > 0 && d.Skills[i-1].Dir > fd.Dir {
				t.Fatalf("not sorted: %q before %q", d.Skills[i-1].Dir, fd.Dir)
			}
		}
		for _, fd := range append([]Found(nil), d.Skills...) {
			got, err := d.Select([]string{fd.Path()}, false, "repo")
			if fd.Err == nil && (err != nil || len(got) != 1 || got[0].Dir != fd.Dir) {
				t.Fatalf("Select(%q) = %v, %v", fd.Path(), dirsOf(got), err)
			}
		}
	})
}

// benchTree writes a repository of n skills under skills/ plus filler
// folders, on disk, for os.DirFS.
func benchTree(b *testing.B, skills, filler int, where string) string {
	b.Helper()
	root := b.TempDir()
	for i := 0; i < skills; i++ {
		d := filepath.Join(root, filepath.FromSlash(where), "s"+strconv.Itoa(i))
		if err := os.MkdirAll(filepath.Join(d, "scripts"), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, manifest.ManifestFile), []byte("---\nname: s"+strconv.Itoa(i)+"\ndescription: A skill.\n---\nBody.\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < filler; i++ {
		if err := os.MkdirAll(filepath.Join(root, "src", "pkg"+strconv.Itoa(i%50), "sub"+strconv.Itoa(i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkDiscover: 100 skills in skills/ (step 2), and the same number
// only the full walk finds among 2,000 other folders (step 3).
func BenchmarkDiscover(b *testing.B) {
	for _, bc := range []struct {
		name  string
		where string
	}{{"step2-skills-dir", "skills"}, {"step3-full-walk", "docs/examples/deep"}} {
		b.Run(bc.name, func(b *testing.B) {
			root := benchTree(b, 100, 2000, bc.where)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, err := Discover(os.DirFS(root), "repo")
				if err != nil || len(d.Skills) != 100 {
					b.Fatalf("found %d, %v", len(d.Skills), err)
				}
			}
		})
	}
}

// TestDiscoverOtherCase: a Skill.md is found by no reader, so the error
// names it with the rename to make rather than "no SKILL.md".
func TestDiscoverOtherCase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fsys fstest.MapFS
		sel  []string
		want string
	}{
		{name: "root", fsys: fstest.MapFS{"Skill.md": skillFile("a")}, want: "rename it to SKILL.md (git mv Skill.md SKILL.md)"},
		{name: "nested", fsys: fstest.MapFS{"skills/a/SKILL.MD": skillFile("a")}, want: "skills/a/SKILL.MD is named in the wrong case; rename it to SKILL.md (git mv skills/a/SKILL.MD skills/a/SKILL.md)"},
		{name: "selected", fsys: fstest.MapFS{"x/Skill.md": skillFile("x")}, sel: []string{"x"}, want: "git mv x/Skill.md x/SKILL.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := Discover(tt.fsys, "repo")
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Select(tt.sel, len(tt.sel) == 0, "example/repo")
			if !errors.Is(err, ErrNoSkill) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Select = %v; want ErrNoSkill naming %q", err, tt.want)
			}
		})
	}
}
