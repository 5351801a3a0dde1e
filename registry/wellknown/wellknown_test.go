package wellknown

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"
)

const indexURL = "https://skills.example/.well-known/agent-skills/index.json"

func skillMD(name string) []byte {
	return []byte("---\nname: " + name + "\ndescription: The " + name + " skill.\n---\n# " + name + "\n")
}

func TestParse(t *testing.T) {
	d := "sha256:" + strings.Repeat("a", 64)
	tests := []struct {
		name, doc string
		want      []Skill
		skipped   int
		err       bool
	}{
		{"v2 relative url", `{"$schema":"` + SchemaV2 + `","skills":[{"name":"pdf","type":"skill-md","description":"PDFs","url":"pdf/SKILL.md","digest":"` + d + `"}]}`,
			[]Skill{{Name: "pdf", Description: "PDFs", Type: TypeSkillMD, URL: "https://skills.example/.well-known/agent-skills/pdf/SKILL.md", Digest: d}}, 0, false},
		{"v2 absolute url", `{"$schema":"` + SchemaV2 + `","skills":[{"name":"pdf","type":"archive","description":"PDFs","url":"https://cdn.example/pdf.tar.gz","digest":"` + d + `"}]}`,
			[]Skill{{Name: "pdf", Description: "PDFs", Type: TypeArchive, URL: "https://cdn.example/pdf.tar.gz", Digest: d}}, 0, false},
		{"v2 bad entries skipped", `{"$schema":"` + SchemaV2 + `","skills":[{"name":"Bad","type":"skill-md","description":"x","url":"a","digest":"` + d + `"},{"name":"ok","type":"skill-md","description":"x","url":"a","digest":"sha256:AB"},{"name":"ok","type":"zip","description":"x","url":"a","digest":"` + d + `"},{"name":"ok","type":"skill-md","description":"x","url":"../a","digest":"` + d + `"}]}`,
			[]Skill{{Name: "ok", Description: "x", Type: TypeSkillMD, URL: "https://skills.example/.well-known/a", Digest: d}}, 3, false},
		{"v2 nothing usable", `{"$schema":"` + SchemaV2 + `","skills":[{"name":"-x","type":"skill-md","description":"x","url":"a","digest":"` + d + `"}]}`, nil, 0, true},
		{"v1", `{"skills":[{"name":"pdf","description":"PDFs","files":["SKILL.md","scripts/a.py"]}]}`,
			[]Skill{{Name: "pdf", Description: "PDFs", Type: TypeFiles, URL: "https://skills.example/.well-known/agent-skills/pdf/", Files: []string{"SKILL.md", "scripts/a.py"}}}, 0, false},
		{"v1 dot-dot file", `{"skills":[{"name":"pdf","description":"PDFs","files":["SKILL.md","../x"]}]}`, nil, 0, true},
		{"v1 absolute file", `{"skills":[{"name":"pdf","description":"PDFs","files":["SKILL.md","/etc/passwd"]}]}`, nil, 0, true},
		{"v1 backslash file", `{"skills":[{"name":"pdf","description":"PDFs","files":["SKILL.md","a\\..\\..\\x"]}]}`, nil, 0, true},
		{"v1 no SKILL.md", `{"skills":[{"name":"pdf","description":"PDFs","files":["a.md"]}]}`, nil, 0, true},
		{"unknown schema", `{"$schema":"https://example/9.json","skills":[]}`, nil, 0, true},
		{"duplicate name", `{"skills":[{"name":"a","description":"x","files":["SKILL.md"]},{"name":"a","description":"y","files":["SKILL.md"]}]}`, nil, 0, true},
		{"no skills", `{}`, nil, 0, true},
		{"not json", `<html>`, nil, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			idx, skipped, err := Parse([]byte(tc.doc), indexURL)
			if tc.err {
				if err == nil || !errors.Is(err, ErrBadIndex) {
					t.Fatalf("Parse = %+v, %v; want ErrBadIndex", idx, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if skipped != tc.skipped || len(idx.Skills) != len(tc.want) {
				t.Fatalf("Parse = %+v, skipped %d; want %+v, skipped %d", idx.Skills, skipped, tc.want, tc.skipped)
			}
			for i, s := range idx.Skills {
				w := tc.want[i]
				if s.Name != w.Name || s.Description != w.Description || s.Type != w.Type || s.URL != w.URL || s.Digest != w.Digest || strings.Join(s.Files, ",") != strings.Join(w.Files, ",") {
					t.Errorf("skill %d = %+v; want %+v", i, s, w)
				}
			}
		})
	}
}

// rawTar writes tar entries as given, hostile ones included.
func rawTar(t *testing.T, hs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range hs {
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		body := h.Uname // the content rides in Uname, cleared here
		h.Uname = ""
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func rawZip(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(skillMD("x"))
	}
	zw.Close()
	return buf.Bytes()
}

func TestUnpack(t *testing.T) {
	md := string(skillMD("x"))
	reg := func(name, body string) *tar.Header { return &tar.Header{Name: name, Uname: body, Mode: 0o644} }
	link := func(name, target string) *tar.Header {
		return &tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: target}
	}
	tests := []struct {
		name  string
		arch  []byte
		want  error // nil: unpacks
		files int
	}{
		{"tar", rawTar(t, reg("SKILL.md", md), reg("./scripts/a.py", "print(1)"), &tar.Header{Name: "scripts/", Typeflag: tar.TypeDir}), nil, 2},
		{"tar inner link", rawTar(t, reg("SKILL.md", md), reg("ref/a.md", "a"), link("b.md", "ref/a.md"), link("ref/c.md", "../b.md")), nil, 4},
		{"zip", rawZip(t, "SKILL.md", "ref/a.md"), nil, 2},
		{"dot-dot", rawTar(t, reg("SKILL.md", md), reg("../evil", "x")), ErrUnsafePath, 0},
		{"dot-dot inside", rawTar(t, reg("SKILL.md", md), reg("a/../../evil", "x")), ErrUnsafePath, 0},
		{"absolute", rawTar(t, reg("SKILL.md", md), reg("/etc/evil", "x")), ErrUnsafePath, 0},
		{"backslash", rawTar(t, reg("SKILL.md", md), reg(`..\evil`, "x")), ErrUnsafePath, 0},
		{"escaping link", rawTar(t, reg("SKILL.md", md), link("ref/x", "../../etc/passwd")), ErrUnsafePath, 0},
		{"absolute link", rawTar(t, reg("SKILL.md", md), link("x", "/etc/passwd")), ErrUnsafePath, 0},
		{"file through link", rawTar(t, reg("SKILL.md", md), link("d", "ref"), reg("d/x", "x")), ErrUnsafePath, 0},
		{"hard link", rawTar(t, reg("SKILL.md", md), &tar.Header{Name: "h", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"}), ErrUnsafePath, 0},
		{"device", rawTar(t, reg("SKILL.md", md), &tar.Header{Name: "d", Typeflag: tar.TypeChar}), ErrUnsafePath, 0},
		{"twice", rawTar(t, reg("SKILL.md", md), reg("./SKILL.md", md)), ErrBadArchive, 0},
		{"no SKILL.md", rawTar(t, reg("a/SKILL.md", md)), ErrBadArchive, 0},
		{"zip dot-dot", rawZip(t, "SKILL.md", "../evil"), ErrUnsafePath, 0},
		{"not an archive", []byte("hello"), ErrBadArchive, 0},
		{"file over limit", rawTar(t, reg("SKILL.md", md), reg("big", strings.Repeat("x", 2000))), gitsrc.ErrTooLarge, 0},
		{"total over limit", rawTar(t, reg("SKILL.md", md), reg("a", strings.Repeat("x", 900)), reg("b", strings.Repeat("x", 900)), reg("c", strings.Repeat("x", 900))), gitsrc.ErrTooLarge, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := Unpack(tc.arch, 1000, 2500)
			if tc.want == nil {
				if err != nil || len(files) != tc.files {
					t.Fatalf("Unpack = %d files, %v; want %d", len(files), err, tc.files)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Unpack = %d files, %v; want %v", len(files), err, tc.want)
			}
		})
	}
}

// TestUnpackBomb: a gzip that claims nothing and inflates to far more
// than the limit stops at the limit.
func TestUnpackBomb(t *testing.T) {
	arch := rawTar(t, &tar.Header{Name: "SKILL.md", Uname: strings.Repeat("\x00", 8<<20), Mode: 0o644})
	if len(arch) > 64<<10 {
		t.Fatalf("the bomb is %d bytes compressed", len(arch))
	}
	if _, err := Unpack(arch, 1<<20, 1<<20); !errors.Is(err, gitsrc.ErrTooLarge) {
		t.Fatalf("Unpack = %v; want ErrTooLarge", err)
	}
}

// site is a real HTTP server on loopback serving files by path.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) put(p string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[p] = b
}

// publish serves a v0.2 index of alpha (a SKILL.md) and beta (an archive)
// and returns the index URL and their digests.
func (s *site) publish(t *testing.T, betaExtra string) (string, string, string) {
	t.Helper()
	alpha := skillMD("alpha")
	beta, err := TarGz([]File{{Path: "SKILL.md", Data: skillMD("beta")}, {Path: "scripts/run.py", Data: []byte("print('" + betaExtra + "')\n"), Mode: 0o755}})
	if err != nil {
		t.Fatal(err)
	}
	s.put("/.well-known/agent-skills/alpha/SKILL.md", alpha)
	s.put("/.well-known/agent-skills/beta.tar.gz", beta)
	idx, err := Marshal([]Entry{
		{Name: "alpha", Type: TypeSkillMD, Description: "Alpha.", URL: "alpha/SKILL.md", Digest: Digest(alpha)},
		{Name: "beta", Type: TypeArchive, Description: "Beta.", URL: "beta.tar.gz", Digest: Digest(beta)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.put("/.well-known/agent-skills/index.json", idx)
	return s.URL + "/.well-known/agent-skills/index.json", Digest(alpha), Digest(beta)
}

func TestFetch(t *testing.T) {
	s := newSite(t)
	u, da, db := s.publish(t, "1")
	ctx := context.Background()
	var f Fetcher
	snap, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	if snap.PinOf("alpha") != da || snap.PinOf("beta") != db || snap.Kind != "default" {
		t.Fatalf("pins %s %s kind %s; want %s %s", snap.PinOf("alpha"), snap.PinOf("beta"), snap.Kind, da, db)
	}
	if b, err := fs.ReadFile(snap.FS, "beta/scripts/run.py"); err != nil || string(b) != "print('1')\n" {
		t.Fatalf("beta/scripts/run.py = %q, %v", b, err)
	}
	if fi, err := fs.Stat(snap.FS, "beta/scripts/run.py"); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("beta/scripts/run.py mode %v, %v; want executable", fi.Mode(), err)
	}

	t.Run("pinned", func(t *testing.T) {
		snap, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: u, Ref: db})
		if err != nil || snap.Commit != db || snap.Kind != "commit" {
			t.Fatalf("Fetch @%s = %+v, %v", db, snap, err)
		}
		if _, err := fs.Stat(snap.FS, "alpha/SKILL.md"); err == nil {
			t.Error("a pinned fetch of beta fetched alpha too")
		}
		if _, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: u, Ref: "sha256:" + strings.Repeat("0", 64)}); !errors.Is(err, gitsrc.ErrRefNotFound) {
			t.Errorf("a digest the site does not serve: %v; want ErrRefNotFound", err)
		}
		if _, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: u, Ref: "main"}); !errors.Is(err, gitsrc.ErrUnsupportedSource) {
			t.Errorf("a branch ref: %v; want ErrUnsupportedSource", err)
		}
	})

	t.Run("digest mismatch", func(t *testing.T) {
		s.put("/.well-known/agent-skills/alpha/SKILL.md", skillMD("evil"))
		defer s.put("/.well-known/agent-skills/alpha/SKILL.md", skillMD("alpha"))
		if _, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: u}); !errors.Is(err, ErrDigestMismatch) {
			t.Fatalf("Fetch of a changed SKILL.md = %v; want ErrDigestMismatch", err)
		}
	})

	t.Run("v0.1", func(t *testing.T) {
		s.put("/.well-known/skills/index.json", []byte(`{"skills":[{"name":"gamma","description":"Gamma.","files":["SKILL.md","ref/a.md"]}]}`))
		s.put("/.well-known/skills/gamma/SKILL.md", skillMD("gamma"))
		s.put("/.well-known/skills/gamma/ref/a.md", []byte("A"))
		snap, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: s.URL + "/.well-known/skills/index.json"})
		if err != nil {
			t.Fatal(err)
		}
		pin := snap.PinOf("gamma")
		if b, err := fs.ReadFile(snap.FS, "gamma/ref/a.md"); err != nil || string(b) != "A" || !strings.HasPrefix(pin, "sha256:") {
			t.Fatalf("gamma/ref/a.md = %q, %v; pin %s", b, err, pin)
		}
		if _, err := f.Fetch(ctx, gitsrc.FetchRequest{URL: s.URL + "/.well-known/skills/index.json", Ref: pin}); err != nil {
			t.Fatalf("pinned v0.1 fetch: %v", err)
		}
	})

	t.Run("resolve", func(t *testing.T) {
		for _, raw := range []string{s.URL, s.URL + "/"} {
			src, err := gitsrc.ParseSource(raw)
			if err != nil {
				t.Fatal(err)
			}
			got := f.Resolve(ctx, src)
			if got.Kind != gitsrc.KindWellKnown || got.URL != u || got.Raw != raw {
				t.Errorf("Resolve(%s) = %+v; want the index %s", raw, got, u)
			}
		}
		src, _ := gitsrc.ParseSource(s.URL + "/team/repo")
		if got := f.Resolve(ctx, src); got.Kind != gitsrc.KindGit {
			t.Errorf("a path without an index resolved to %+v; want git (no fallback to the root index)", got)
		}
	})
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		u  string
		ok bool
	}{
		{"https://skills.example/.well-known/agent-skills/index.json", true},
		{"http://127.0.0.1:8080/.well-known/agent-skills/index.json", true},
		{"http://[::1]:8080/x", true},
		{"http://localhost/x", true},
		{"http://skills.example/x", false},
		{"http://127.0.0.1.evil.example/x", false},
		{"file:///etc/passwd", false},
		{"https://u:p@skills.example/x", false},
	} {
		if _, err := CheckURL(tc.u); (err == nil) != tc.ok {
			t.Errorf("CheckURL(%s) = %v; want ok %v", tc.u, err, tc.ok)
		}
	}
}
