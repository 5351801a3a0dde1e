package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestH1MatchesDirhash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"SKILL.md": skillMD("h"), "scripts/a.py": "print(1)\n", "references/deep/x.md": "x", "empty": "",
	})
	want, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	got, rec, err := HashSkill(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || rec.h1() != want || rec.DirHash != want {
		t.Fatalf("HashSkill = %s, record h1 = %s; dirhash.HashDir = %s", got, rec.h1(), want)
	}
	if len(rec.Files) != 4 || rec.Files["scripts/a.py"].SHA256 == "" {
		t.Fatalf("record = %+v", rec.Files)
	}
	// __pycache__ is outside the hash.
	writeFiles(t, dir, map[string]string{"scripts/__pycache__/a.cpython-311.pyc": "bytecode"})
	if again, _, err := HashSkill(dir); err != nil || again != want {
		t.Fatalf("with __pycache__: %s, %v; want %s", again, err, want)
	}
}

func TestHashSkillRefusesLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"SKILL.md": skillMD("h")})
	if err := os.Symlink("SKILL.md", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := HashSkill(dir); err == nil || !strings.Contains(err.Error(), "link") {
		t.Fatalf("HashSkill with a link = %v", err)
	}
	if err := CheckNoLinks(dir); !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), "link is a symbolic link to SKILL.md") {
		t.Fatalf("CheckNoLinks = %v", err)
	}
}

// installed adds a skill with scripts through the real Add and returns
// the store and entry; the store's clock runs an hour ahead so that
// fingerprints are never "racy".
func installed(t *testing.T) (*Store, Entry) {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{
		"SKILL.md": skillMD("tamper"), "scripts/run.py": "print('ok')\n", "references/guide.md": "guide\n",
	})
	s := newStore(t)
	s.Now = func() time.Time { return time.Now().Add(time.Hour) }
	e := mustAdd(t, s, repo.FileURL(), nil, nil)
	if !strings.HasPrefix(e.DirHash, "h1:") {
		t.Fatalf("DirHash = %q", e.DirHash)
	}
	if _, err := os.Stat(integrityRecords(s.Home).path(e.Canonical)); err != nil {
		t.Fatalf("no integrity record: %v", err)
	}
	return s, e
}

func TestVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(t *testing.T, s *Store, e Entry)
		want   Changes
	}{
		{name: "untouched", change: func(*testing.T, *Store, Entry) {}},
		{name: "script edited", change: func(t *testing.T, s *Store, e Entry) {
			writeFiles(t, e.Path, map[string]string{"scripts/run.py": "print('evil')\n"})
		}, want: Changes{Changed: []string{"scripts/run.py"}}},
		{name: "same size edit", change: func(t *testing.T, s *Store, e Entry) {
			writeFiles(t, e.Path, map[string]string{"references/guide.md": "GUIDE\n"})
		}, want: Changes{Changed: []string{"references/guide.md"}}},
		{name: "file added", change: func(t *testing.T, s *Store, e Entry) {
			writeFiles(t, e.Path, map[string]string{"scripts/new.py": "x"})
		}, want: Changes{Added: []string{"scripts/new.py"}}},
		{name: "file removed", change: func(t *testing.T, s *Store, e Entry) {
			os.Remove(filepath.Join(e.Path, "references", "guide.md"))
		}, want: Changes{Removed: []string{"references/guide.md"}}},
		{name: "replaced by a link", change: func(t *testing.T, s *Store, e Entry) {
			p := filepath.Join(e.Path, "scripts", "run.py")
			os.Remove(p)
			os.Symlink("/etc/passwd", p)
		}, want: Changes{Changed: []string{"scripts/run.py"}}},
		{name: "pycache ignored", change: func(t *testing.T, s *Store, e Entry) {
			writeFiles(t, e.Path, map[string]string{"scripts/__pycache__/run.pyc": "x"})
		}},
		{name: "record missing, untouched", change: func(t *testing.T, s *Store, e Entry) {
			os.Remove(integrityRecords(s.Home).path(e.Canonical))
		}},
		{name: "record forged", change: func(t *testing.T, s *Store, e Entry) {
			writeFiles(t, e.Path, map[string]string{"scripts/run.py": "print('evil')\n"})
			os.WriteFile(integrityRecords(s.Home).path(e.Canonical), []byte(`{"dir_hash":"`+e.DirHash+`","files":{"scripts/run.py":{"sha256":"00"}}}`), 0o644)
		}, want: Changes{Unnamed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, e := installed(t)
			tt.change(t, s, e)
			for _, full := range []bool{false, true} {
				c, recorded, err := s.Verify(e, full)
				if err != nil || !recorded {
					t.Fatalf("Verify(full=%v) = %v, %v", full, recorded, err)
				}
				c.Got, c.Want = "", ""
				if !reflect.DeepEqual(c, tt.want) {
					t.Errorf("Verify(full=%v) = %+v; want %+v", full, c, tt.want)
				}
				err = s.CheckIntegrity(e)
				var te *TamperedError
				if tt.want.Empty() != (err == nil) || (err != nil && (!errors.As(err, &te) || !errors.Is(err, ErrTampered))) {
					t.Errorf("CheckIntegrity = %v", err)
				}
				if err != nil && !strings.Contains(err.Error(), "agent skill verify tamper") {
					t.Errorf("no fix in %q", err)
				}
			}
		})
	}
}

// TestVerifyFingerprintCache shows that an unchanged fingerprint skips
// reading the file, and that a full check reads it anyway.
func TestVerifyFingerprintCache(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	s, e := installed(t)
	if err := s.CheckIntegrity(e); err != nil { // records fingerprints
		t.Fatal(err)
	}
	rec := integrityRecords(s.Home).read(e)
	if rec == nil {
		t.Fatal("no record after a check")
	}
	for n, r := range rec.Files {
		if r.fingerprint() == (fingerprint{}) {
			t.Errorf("%s: no fingerprint recorded", n)
		}
	}
	p := filepath.Join(e.Path, "references", "guide.md")
	if err := os.Chmod(p, 0); err != nil { // changes ctime: one more read
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o644) })
	if c, _, _ := s.Verify(e, false); !reflect.DeepEqual(c.Changed, []string{"references/guide.md"}) {
		t.Fatalf("unreadable after chmod: %+v", c)
	}
	os.Chmod(p, 0o644)
	if err := s.CheckIntegrity(e); err != nil {
		t.Fatal(err)
	}
}

func TestVerifySkipsWithoutHash(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c, recorded, err := s.Verify(Entry{Canonical: "old", Path: filepath.Join(s.SkillsDir(), "old")}, false)
	if err != nil || recorded || !c.Empty() {
		t.Fatalf("Verify without DirHash = %+v, %v, %v", c, recorded, err)
	}
}

// TestHashSkillTakesNoBufferPerFile: hashing a folder copies each file into
// its hash through a pooled buffer; io.Copy took a new 32 KiB one per
// file, 56 MB for an `add --all` of 1,000 skills.
func TestHashSkillTakesNoBufferPerFile(t *testing.T) {
	dir := t.TempDir()
	const files = 64
	for i := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.md", i)), []byte(strings.Repeat("z", 2000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := HashSkill(dir); err != nil { // fill the pool
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, _, err := HashSkill(dir); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Names, stats and records take a few hundred bytes a file; under
	// -race sync.Pool drops a quarter of its buffers.
	if per := (after.TotalAlloc - before.TotalAlloc) / files; per > 16<<10 {
		t.Errorf("hashing allocated %d bytes per file, want under 16 KiB (no 32 KiB copy buffer each)", per)
	}
}
