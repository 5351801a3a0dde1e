package ocisrc_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/ocitest"
	"github.com/agentskills/agent/registry/ocisrc"
	"golang.org/x/mod/sumdb/dirhash"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// skillDir writes a small skill folder and returns it with its files.
func skillDir(t *testing.T, version string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"SKILL.md":           "---\nname: hello\ndescription: Says hello.\nversion: " + version + "\n---\n# Hello\n",
		"scripts/greet.py":   "print('hello " + version + "')\n",
		"references/a.md":    "same\n",
		"references/copy.md": "same\n",
		"empty.txt":          "",
	}
	var names []string
	for n, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(n, ".py") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return dir, names
}

func hashDir(t *testing.T, dir string) string {
	t.Helper()
	h, err := dirhash.HashDir(dir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func publish(t *testing.T, c *ocisrc.Client, ref string, version string) (string, string) {
	t.Helper()
	dir, names := skillDir(t, version)
	r, err := ocisrc.Parse(ref)
	if err != nil {
		t.Fatal(err)
	}
	h1 := hashDir(t, dir)
	desc, err := c.Push(context.Background(), r, dir, names, ocisrc.Config{Name: "hello", Version: version, H1: h1})
	if err != nil {
		t.Fatalf("Push %s: %v", ref, err)
	}
	return desc.Digest.String(), h1
}

func TestPushPull(t *testing.T) {
	reg := ocitest.Start(t)
	c := &ocisrc.Client{Credentials: emptyCreds{}}
	ctx := context.Background()
	d1, h1 := publish(t, c, reg.Ref("team/hello:"+ocisrc.TagFor("1.0.0")), "1.0.0")
	d2, _ := publish(t, c, reg.Ref("team/hello:"+ocisrc.TagFor("1.1.0+build.7")), "1.1.0+build.7")
	publish(t, c, reg.Ref("team/hello:2.0.0-rc.1"), "2.0.0-rc.1")

	tags, err := c.Tags(ctx, mustParse(t, reg.Ref("team/hello")))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(tags, "1.1.0_build.7") {
		t.Fatalf("tags %v: want 1.1.0+build.7 written as 1.1.0_build.7", tags)
	}

	tests := []struct {
		name, ref, digest, tag string
	}{
		{"tag", reg.Ref("team/hello:1.0.0"), d1, "1.0.0"},
		{"digest", reg.Ref("team/hello@" + d1), d1, ""},
		{"constraint", reg.Ref("team/hello@^1.0"), d2, "1.1.0_build.7"},
		{"highest release", reg.Ref("team/hello"), d2, "1.1.0_build.7"},
		{"pre-release by name", reg.Ref("team/hello@>=2.0.0-rc.0"), "", "2.0.0-rc.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := c.Pull(ctx, mustParse(t, tc.ref))
			if err != nil {
				t.Fatal(err)
			}
			if tc.digest != "" && a.Ref.Digest != tc.digest {
				t.Errorf("digest %s, want %s", a.Ref.Digest, tc.digest)
			}
			if a.Ref.Tag != tc.tag {
				t.Errorf("tag %q, want %q", a.Ref.Tag, tc.tag)
			}
			if len(a.Files) != 5 || a.Files[0].Path != "SKILL.md" {
				t.Fatalf("files %+v", a.Files)
			}
		})
	}

	// What Pull returns hashes, written out, to the h1: of the folder
	// that was pushed; the script keeps its executable bit.
	a, err := c.Pull(ctx, mustParse(t, reg.Ref("team/hello:1.0.0")))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, f := range a.Files {
		p := filepath.Join(out, filepath.FromSlash(f.Path))
		os.MkdirAll(filepath.Dir(p), 0o755)
		mode := os.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			t.Fatal(err)
		}
	}
	if got := hashDir(t, out); got != h1 || a.Config.H1 != h1 {
		t.Fatalf("pulled folder hashes to %s, config says %s, pushed %s", got, a.Config.H1, h1)
	}
	if fi, _ := os.Stat(filepath.Join(out, "scripts", "greet.py")); fi.Mode()&0o100 == 0 {
		t.Errorf("greet.py lost its executable bit: %v", fi.Mode())
	}
}

func TestPullRefusesChangedBlob(t *testing.T) {
	reg := ocitest.Start(t)
	c := &ocisrc.Client{Credentials: emptyCreds{}}
	publish(t, c, reg.Ref("team/hello:1.0.0"), "1.0.0")
	dir, _ := skillDir(t, "1.0.0")
	body, _ := os.ReadFile(filepath.Join(dir, "scripts", "greet.py"))
	want := "sha256:" + sha(body)
	// Same length, other bytes: only a hash tells.
	bad := append([]byte(nil), body...)
	bad[0] = 'P'
	if err := os.WriteFile(reg.BlobPath(want), bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := c.Pull(context.Background(), mustParse(t, reg.Ref("team/hello:1.0.0")))
	if !errors.Is(err, ocisrc.ErrDigestMismatch) {
		t.Fatalf("Pull of a changed blob: %v, want ErrDigestMismatch", err)
	}
	for _, s := range []string{"expected " + want, "got sha256:" + sha(bad)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func TestPullRefusesOtherArtifacts(t *testing.T) {
	reg := ocitest.Start(t)
	c := &ocisrc.Client{Credentials: emptyCreds{}}
	_, err := c.Pull(context.Background(), mustParse(t, reg.Ref("team/none:1.0.0")))
	if !errors.Is(err, ocisrc.ErrNotFound) {
		t.Fatalf("Pull of a missing tag: %v, want ErrNotFound", err)
	}
}

func mustParse(t *testing.T, s string) ocisrc.Reference {
	t.Helper()
	r, err := ocisrc.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// emptyCreds keeps the tests off the machine's Docker configuration.
type emptyCreds struct{}

func (emptyCreds) Get(context.Context, string) (auth.Credential, error) {
	return auth.EmptyCredential, nil
}
func (emptyCreds) Put(context.Context, string, auth.Credential) error { return nil }
func (emptyCreds) Delete(context.Context, string) error               { return nil }
