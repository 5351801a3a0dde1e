package registry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadRegistry feeds arbitrary bytes to the registry.json reader: it
// must return entries or ErrCorrupt, never panic, and what it accepts must
// survive a write and a second read unchanged.
func FuzzReadRegistry(f *testing.F) {
	for _, s := range []string{
		`{"version":1,"skills":[]}`,
		`{"version":1,"skills":[{"name":"A_b","canonical":"a-b","source":"git","trusted":true,"path":"/x","plugin":{"path":"/p","sha256":"00"}}]}`,
		`{"version":1,"skills":[{"canonical":"a"},{"canonical":"a"}]}`,
		`{"version":1,"skills":[{"canonical":"../x"}]}`,
		`{"version":2}`, `{} {}`, ``, `null`, `[]`, `{"skills":null}`, `{}`, `{"version":1}`,
		`{"version":1,"skills":{}}`, `{"version":"1","skills":[]}`, `{"version":0,"skills":[]}`,
		`{"version":1,"skills":[{"canonical":"a","path":"HOME/skills/a","dir_hash":"h1:x"}]}`,
		`{"version":1,"skills":[{"canonical":"a","path":"HOME/skills/a/../b"}]}`,
		`{"version":1,"skills":[{"canonical":"a","path":"HOME/skills/a","plugin":{"path":"HOME/plugins/a/1/a"}}]}`,
		`{"version":1,"skills":[{"canonical":"a","installed_at":"2025-01-01T00:00:00Z","tools":[{"name":"t","input_schema":{"type":"object"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewStore(t.TempDir())
		// HOME in a seed stands for this store's AGENT_HOME, so that seeds
		// can hold entries the path rule accepts.
		data = bytes.ReplaceAll(data, []byte("HOME"), []byte(s.Home))
		if err := os.MkdirAll(s.SkillsDir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.RegistryPath(), data, 0o644); err != nil {
			t.Fatal(err)
		}
		es, err := s.List()
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !strings.Contains(err.Error(), "read registry") {
				t.Fatalf("error is not ErrCorrupt: %v", err)
			}
			if !strings.Contains(err.Error(), s.RegistryPath()) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if err := s.write(es); err != nil {
			t.Fatalf("write back: %v", err)
		}
		again, err := s.List()
		if err != nil {
			t.Fatalf("re-read after write: %v", err)
		}
		if len(again) != len(es) {
			t.Fatalf("round trip changed %d entries to %d", len(es), len(again))
		}
		for i := range es {
			if es[i].Canonical != again[i].Canonical || es[i].CommitSHA != again[i].CommitSHA || es[i].Trusted != again[i].Trusted {
				t.Fatalf("round trip changed entry %d: %+v -> %+v", i, es[i], again[i])
			}
		}
		if _, err := os.Stat(filepath.Join(s.SkillsDir(), "registry.json")); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSelect feeds arbitrary AGENT_SKILLS values to Select: it must never
// panic, and only ever activate installed skills that are trusted or
// bundled (except for all-untrusted), each at most once.
func FuzzSelect(f *testing.F) {
	for _, s := range []string{"", "none", "all", "ALL", "all-untrusted", "a,B_c", " a , , b ", "../x,a", "untrusted", "a,a,A"} {
		f.Add(s)
	}
	entries := []Entry{
		{Name: "a", Canonical: "a", Trusted: true, Origin: Origin{Source: SourceGit}},
		{Name: "B_c", Canonical: "b-c", Trusted: true, Origin: Origin{Source: SourceGit}},
		{Name: "untrusted", Canonical: "untrusted", Origin: Origin{Source: SourceGit}},
		{Name: "bundled", Canonical: "bundled", Origin: Origin{Source: SourceBundled}},
	}
	f.Fuzz(func(t *testing.T, spec string) {
		active, _ := Select(entries, spec)
		seen := map[string]bool{}
		for _, e := range active {
			if seen[e.Canonical] {
				t.Fatalf("%q activates %s twice", spec, e.Canonical)
			}
			seen[e.Canonical] = true
			if !e.Trusted && e.Source != SourceBundled && !strings.EqualFold(strings.TrimSpace(spec), "all-untrusted") {
				t.Fatalf("%q activates untrusted %s", spec, e.Canonical)
			}
		}
	})
}

// FuzzIntegrityRecord feeds arbitrary bytes as a skill's per-file record
// (state/integrity/<name>.json): Verify must never panic, must not report
// an edited skill as unchanged whatever the record says, and must accept
// the untouched skill whatever the record says.
func FuzzIntegrityRecord(f *testing.F) {
	f.Add([]byte(`{"dir_hash":"h1:x","files":{"SKILL.md":{"sha256":"00"}}}`))
	f.Add([]byte(`{"dir_hash":"","files":null}`))
	f.Add([]byte(`{"files":{"a":null}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewStore(t.TempDir())
		dir := s.skillDir("fz")
		for name, content := range map[string]string{"SKILL.md": "---\nname: fz\ndescription: d\n---\n", "scripts/a.py": "print(1)\n"} {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		h1, _, err := HashSkill(dir)
		if err != nil {
			t.Fatal(err)
		}
		e := Entry{Canonical: "fz", Path: dir, Integrity: Integrity{DirHash: h1}}
		if err := os.MkdirAll(integrityRecords(s.Home).dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(integrityRecords(s.Home).path("fz"), bytes.ReplaceAll(data, []byte("h1:x"), []byte(h1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, _, err := s.Verify(e, false); err != nil || !c.Empty() {
			t.Fatalf("untouched skill: %+v, %v", c, err)
		}
		if err := os.WriteFile(integrityRecords(s.Home).path("fz"), bytes.ReplaceAll(data, []byte("h1:x"), []byte(h1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scripts", "a.py"), []byte("evil\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if c, _, err := s.Verify(e, false); err != nil || c.Empty() {
			t.Fatalf("edited skill reported unchanged: %+v, %v", c, err)
		}
	})
}
