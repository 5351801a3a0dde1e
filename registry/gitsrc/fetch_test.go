package gitsrc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// fetchRepo is a repository with history: tags (one annotated), a second
// branch, and a tip no tag names.
type fetchRepo struct {
	*gittest.Repo
	first, v1, v11, tip, side string
}

func newFetchRepo(t *testing.T) fetchRepo {
	t.Helper()
	r := fetchRepo{Repo: gittest.NewRepo(t, map[string]string{"SKILL.md": string(skillFile("fetched").Data), "big.txt": strings.Repeat("x", 1<<16)})}
	r.first = r.Head(t)
	r.Commit(t, map[string]string{"f": "1.0"}, "1.0")
	r.v1 = r.Head(t)
	r.Tag(t, "v1.0.0")
	r.v11 = r.Commit(t, map[string]string{"f": "1.1"}, "1.1")
	r.AnnotatedTag(t, "v1.1.0", "release 1.1")
	r.tip = r.Commit(t, map[string]string{"f": "tip", "skills/a/SKILL.md": string(skillFile("a").Data)}, "tip")
	r.Branch(t, "side")
	r.side = r.Commit(t, map[string]string{"f": "side"}, "side")
	r.Branch(t, "main")
	return r
}

func TestFetchResolves(t *testing.T) {
	t.Parallel()
	r := newFetchRepo(t)
	urls := map[string]string{"http": gittest.ServeRepo(t, r.Repo), "file": r.FileURL(), "path": r.Dir()}
	tests := []struct {
		name       string
		ref, cons  string
		want, kind string
		version    string
		f          string // content of file f, "" when absent
	}{
		{name: "default branch", want: r.tip, kind: "default", f: "tip"},
		{name: "branch", ref: "side", want: r.side, kind: "branch", f: "side"},
		{name: "tag", ref: "v1.0.0", want: r.v1, kind: "tag", version: "1.0.0", f: "1.0"},
		{name: "tag without v", ref: "1.0.0", want: r.v1, kind: "tag", version: "1.0.0", f: "1.0"},
		{name: "annotated tag", ref: "v1.1.0", want: r.v11, kind: "tag", version: "1.1.0", f: "1.1"},
		{name: "constraint", cons: "^1", want: r.v11, kind: "tag", version: "1.1.0", f: "1.1"},
		{name: "constraint lower", cons: "~1.0", want: r.v1, kind: "tag", version: "1.0.0", f: "1.0"},
		{name: "tip SHA", ref: r.side, want: r.side, kind: "commit", f: "side"},
		{name: "older SHA", ref: r.first, want: r.first, kind: "commit"},
		{name: "short SHA", ref: r.v11[:10], want: r.v11, kind: "commit", f: "1.1"},
	}
	for tname, u := range urls {
		for _, tt := range tests {
			t.Run(tname+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				g := &GoGit{}
				snap, err := g.Fetch(context.Background(), FetchRequest{URL: u, Ref: tt.ref, Constraint: tt.cons, CacheDir: t.TempDir()})
				if err != nil {
					t.Fatalf("Fetch: %v", err)
				}
				if snap.Commit != tt.want || snap.Kind != tt.kind || snap.Version != tt.version {
					t.Fatalf("Fetch = %s %s %q; want %s %s %q", Short(snap.Commit), snap.Kind, snap.Version, Short(tt.want), tt.kind, tt.version)
				}
				got, err := fs.ReadFile(snap.FS, "f")
				if tt.f == "" {
					if err == nil {
						t.Fatalf("f = %q; want no file", got)
					}
					return
				}
				if err != nil || string(got) != tt.f {
					t.Fatalf("f = %q, %v; want %q", got, err, tt.f)
				}
			})
		}
	}
}

func TestFetchErrors(t *testing.T) {
	t.Parallel()
	r := newFetchRepo(t)
	empty := gittest.NewRepo(t, nil)
	tests := []struct {
		name string
		req  FetchRequest
		want error
	}{
		{name: "unknown ref", req: FetchRequest{URL: gittest.ServeRepo(t, r.Repo), Ref: "nope"}, want: ErrRefNotFound},
		{name: "unknown ref file", req: FetchRequest{URL: r.FileURL(), Ref: "nope"}, want: ErrRefNotFound},
		{name: "unknown SHA", req: FetchRequest{URL: gittest.ServeRepo(t, r.Repo), Ref: strings.Repeat("ab", 20)}, want: ErrRefNotFound},
		{name: "no matching version", req: FetchRequest{URL: r.FileURL(), Constraint: "^9"}, want: ErrNoMatchingVersion},
		{name: "no repository", req: FetchRequest{URL: "file://" + t.TempDir()}, want: ErrRepoNotFound},
		{name: "no repository http", req: FetchRequest{URL: gittest.Serve(t, t.TempDir()) + "/none"}, want: ErrRepoNotFound},
		{name: "empty repository", req: FetchRequest{URL: empty.FileURL()}, want: ErrNoSkill},
		{name: "command transport", req: FetchRequest{URL: "ext::sh -c id"}, want: ErrUnsupportedSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.req.CacheDir = filepath.Join(t.TempDir(), "cache")
			_, err := (&GoGit{}).Fetch(context.Background(), tt.req)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Fetch = %v; want %v", err, tt.want)
			}
			if _, err := os.Stat(tt.req.CacheDir); err == nil {
				ents, _ := os.ReadDir(tt.req.CacheDir)
				for _, e := range ents {
					if !strings.HasSuffix(e.Name(), ".lock") {
						t.Errorf("a failed fetch left %s in the cache", e.Name())
					}
				}
			}
		})
	}
}

// commits counts the commits in a repository's object store.
func commits(t *testing.T, dir string) int {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	iter, err := repo.Storer.IterEncodedObjects(plumbing.CommitObject)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	_ = iter.ForEach(func(plumbing.EncodedObject) error { n++; return nil })
	return n
}

// TestFetchShallowOverHTTP proves that a fetch over http brings one commit,
// that an update after a new commit brings only that commit, and that a
// second skill from the same commit fetches nothing.
func TestFetchShallowOverHTTP(t *testing.T) {
	t.Parallel()
	r := newFetchRepo(t)
	u := gittest.ServeRepo(t, r.Repo)
	cacheDir := t.TempDir()
	g := &GoGit{}
	snap, err := g.Fetch(context.Background(), FetchRequest{URL: u, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	dir := cachePath(cacheDir, u, "")
	if n := commits(t, dir); n != 1 {
		t.Fatalf("the first fetch brought %d commits; want 1 (depth 1)", n)
	}
	packs := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
		return len(m)
	}
	if _, err := g.Fetch(context.Background(), FetchRequest{URL: u, CacheDir: cacheDir}); err != nil {
		t.Fatal(err)
	}
	if n := packs(); n != 1 {
		t.Fatalf("fetching the same commit again wrote %d packs; want the one of the first fetch", n)
	}
	next := r.Commit(t, map[string]string{"g": "new"}, "next")
	snap2, err := g.Fetch(context.Background(), FetchRequest{URL: u, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if snap2.Commit != next {
		t.Fatalf("update fetched %s; want %s", Short(snap2.Commit), Short(next))
	}
	if n := commits(t, dir); n != 2 {
		t.Fatalf("after the update the cache holds %d commits; want 2", n)
	}
	// The update's pack holds the new commit, its tree and the new blob,
	// not big.txt again.
	if _, err := snap.BlobHashes(snap.Commit, ""); err != nil {
		t.Fatalf("the old commit's tree is gone from the cache: %v", err)
	}
	var sizes int64
	m, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*.pack"))
	for _, p := range m {
		fi, _ := os.Stat(p)
		if fi.Size() < sizes || sizes == 0 {
			sizes = fi.Size()
		}
	}
	if sizes > 4<<10 {
		t.Errorf("the update's pack is %d bytes; it should hold only the new objects", sizes)
	}
}

// TestFetchLocalReadsInPlace proves that a file:// source writes nothing:
// no cache, no copy.
func TestFetchLocalReadsInPlace(t *testing.T) {
	t.Parallel()
	r := newFetchRepo(t)
	cacheDir := filepath.Join(t.TempDir(), "cache")
	snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: r.FileURL(), CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Commit != r.tip {
		t.Fatalf("Fetch = %s; want %s", Short(snap.Commit), Short(r.tip))
	}
	if _, err := os.Stat(cacheDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a local fetch created %s", cacheDir)
	}
}

func TestTreeFS(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, map[string]string{
		"SKILL.md":               string(skillFile("tree").Data),
		"scripts/run.py":         "print(1)\n",
		"scripts/tool.sh":        "#!/bin/sh\necho hi\n",
		"a/b/c/deep.txt":         "deep",
		"a-b/x.txt":              "sorts after a/ in git, before it by name",
		"references/notes.md":    "notes",
		"references/nested/n.md": "n",
	})
	snap := headSnapshot(t, r)
	if err := fstest.TestFS(snap.FS, "SKILL.md", "scripts/run.py", "a/b/c/deep.txt", "a-b/x.txt", "references/nested/n.md"); err != nil {
		t.Fatal(err)
	}
	fi, err := fs.Stat(snap.FS, "scripts/tool.sh")
	if err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("scripts/tool.sh: %v, mode %v; want executable", err, fi)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := WriteTree(snap.FS, "scripts", dst, Limits{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dst, "tool.sh")); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("written tool.sh: %v %v; want executable", err, fi)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "run.py")); string(got) != "print(1)\n" {
		t.Fatalf("written run.py = %q", got)
	}
}

func TestTreeFSSymlinks(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, map[string]string{"skill/SKILL.md": string(skillFile("links").Data), "secret": "s"})
	r.Symlink(t, "skill/link", "../secret")
	r.Symlink(t, "skill/inside", "SKILL.md")
	r.Commit(t, nil, "links")
	snap := headSnapshot(t, r)
	fi, err := fs.Lstat(snap.FS, "skill/link")
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Lstat(skill/link) = %v, %v; want a link", fi, err)
	}
	if target, err := fs.ReadLink(snap.FS, "skill/link"); err != nil || target != "../secret" {
		t.Fatalf("ReadLink = %q, %v", target, err)
	}
	if _, err := snap.FS.Open("skill/link"); err == nil {
		t.Fatal("Open followed a symbolic link")
	}
	// CopySkill refuses the link that leaves the skill, as for a checkout.
	dst := t.TempDir()
	if err := WriteTree(snap.FS, "skill", filepath.Join(dst, "skill"), Limits{}); err != nil {
		t.Fatal(err)
	}
	if err := CopySkill(filepath.Join(dst, "skill"), filepath.Join(dst, "copy")); err == nil {
		t.Fatal("CopySkill accepted a link out of the skill")
	}
}

// TestFetchSizeLimits fetches a 3 MiB file over http: within the limits it
// is written whole (streamed: over streamAbove); under a smaller per-file
// limit the pack is refused while it streams in, and WriteTree refuses a
// file or a skill over its limit before writing it.
func TestFetchSizeLimits(t *testing.T) {
	t.Parallel()
	data := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	r := gittest.NewRepo(t, map[string]string{"SKILL.md": "---\nname: big\ndescription: d\n---\n", "data.bin": data, "small.txt": "small\n"})
	u := gittest.ServeRepo(t, r)
	for _, tc := range []struct {
		name    string
		maxFile int64
		lim     Limits
		want    error
	}{
		{name: "within the limits", maxFile: 4 << 20},
		{name: "default limits"},
		{name: "pack over the file limit", maxFile: 1 << 20, want: ErrTooLarge},
		{name: "file over the file limit", maxFile: 4 << 20, lim: Limits{File: 1 << 20}, want: ErrTooLarge},
		{name: "skill over the skill limit", maxFile: 4 << 20, lim: Limits{Skill: 3<<20 + 10}, want: ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: t.TempDir(), MaxFile: tc.maxFile})
			if err == nil {
				err = WriteTree(snap.FS, ".", filepath.Join(t.TempDir(), "out"), tc.lim)
			}
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v; want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	// Written whole when allowed.
	snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := WriteTree(snap.FS, ".", out, Limits{}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(out, "data.bin")); err != nil || string(got) != data {
		t.Fatalf("data.bin: %d bytes, %v; want %d bytes", len(got), err, len(data))
	}
}

// headSnapshot is the snapshot of r's HEAD, read in place.
func headSnapshot(t *testing.T, r *gittest.Repo) *Snapshot {
	t.Helper()
	head, err := r.Git().Head()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := NewSnapshot(r.Git(), head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
