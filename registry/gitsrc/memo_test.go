package gitsrc

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// countingStore counts the reads that reach the real object store.
type countingStore struct {
	storer.EncodedObjectStorer
	reads map[plumbing.Hash]int
}

func (c *countingStore) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	c.reads[h]++
	return c.EncodedObjectStorer.EncodedObject(t, h)
}

// TestMemoReadsSmallObjectsOnce: a snapshot's tree reads each small object
// from the store once however often it is opened, and a large one each
// time (it is not held in memory).
func TestMemoReadsSmallObjectsOnce(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", memoObject+1)
	r := gittest.NewRepo(t, map[string]string{"s/SKILL.md": "small", "s/big.bin": big})
	repo := r.Git()
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	c, err := repo.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	count := &countingStore{EncodedObjectStorer: repo.Storer, reads: map[plumbing.Hash]int{}}
	m := &memo{EncodedObjectStorer: count, objs: map[plumbing.Hash]plumbing.EncodedObject{}}
	root, err := object.GetTree(m, c.TreeHash)
	if err != nil {
		t.Fatal(err)
	}
	fsys := NewTreeFS(root)
	for range 3 {
		for name, want := range map[string]string{"s/SKILL.md": "small", "s/big.bin": big} {
			got, err := fs.ReadFile(fsys, name)
			if err != nil || string(got) != want {
				t.Fatalf("read %s: %d bytes, %v", name, len(got), err)
			}
		}
	}
	sub, err := root.Tree("s")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sub.Entries {
		switch got := count.reads[e.Hash]; {
		case e.Name == "SKILL.md" && got != 1:
			t.Errorf("%s was read from the store %d times, want once", e.Name, got)
		case e.Name == "big.bin" && got < 3:
			t.Errorf("%s was read from the store %d times, want once per open (it is too large to keep)", e.Name, got)
		}
	}
}

// TestTreeFSConcurrentUse reads one TreeFS from many goroutines, as add
// stages and audits skills at once; under -race, go-git's shared state
// (a tree's entry map, the store's pack handles) would show here without
// the TreeFS lock.
func TestTreeFSConcurrentUse(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = fmt.Sprintf("skill %d", i)
		files[fmt.Sprintf("skills/s%02d/scripts/run.py", i)] = fmt.Sprintf("print(%d)", i)
	}
	r := gittest.NewRepo(t, files)
	snap := headSnapshot(t, r)
	var (
		wg  sync.WaitGroup
		bad atomic.Int32
	)
	for w := range 8 {
		wg.Go(func() {
			for i := range 40 {
				i := (i + w*5) % 40
				dir := fmt.Sprintf("skills/s%02d", i)
				ents, err := fs.ReadDir(snap.FS, dir)
				if err != nil || len(ents) != 2 {
					bad.Add(1)
					continue
				}
				for _, e := range ents {
					if fi, err := e.Info(); err != nil || (!fi.IsDir() && fi.Size() == 0) {
						bad.Add(1)
					}
				}
				f, err := snap.FS.Open(dir + "/SKILL.md")
				if err != nil {
					bad.Add(1)
					continue
				}
				b, err := io.ReadAll(f)
				f.Close()
				if err != nil || string(b) != fmt.Sprintf("skill %d", i) {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n > 0 {
		t.Fatalf("%d concurrent reads failed or read the wrong content", n)
	}
}

// TestMemoReadsLooseObjects: a local repository's small loose objects are
// read from their files, not through the store, and read right; what is
// packed, large or damaged, or asked for as another type, is the store's.
func TestMemoReadsLooseObjects(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("y", memoObject+1)
	cases := []struct {
		name      string
		prepare   func(t *testing.T, r *gittest.Repo, id string)
		file      string
		wantStore bool // the read reaches the store
		wantErr   bool
	}{
		{name: "small loose object", file: "s/SKILL.md"},
		{name: "large loose object", file: "s/big.bin", wantStore: true},
		{name: "packed object", file: "s/SKILL.md", wantStore: true, prepare: func(t *testing.T, r *gittest.Repo, id string) {
			r.RunGit(t, "repack", "-a", "-d", "-q")
			r.RunGit(t, "prune-packed")
		}},
		{name: "damaged loose object", file: "s/SKILL.md", wantStore: true, wantErr: true, prepare: func(t *testing.T, r *gittest.Repo, id string) {
			p := filepath.Join(r.Dir(), ".git", "objects", id[:2], id[2:])
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(p, 0o644)
			if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"s/SKILL.md": "small " + tc.name, "s/big.bin": big}
			r := gittest.NewRepo(t, files)
			head, err := r.Git().Head()
			if err != nil {
				t.Fatal(err)
			}
			c, err := r.Git().CommitObject(head.Hash())
			if err != nil {
				t.Fatal(err)
			}
			root, err := c.Tree()
			if err != nil {
				t.Fatal(err)
			}
			e, err := root.FindEntry(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if tc.prepare != nil {
				tc.prepare(t, r, e.Hash.String())
			}
			// A fresh store, so that nothing read above is cached in it.
			count := &countingStore{EncodedObjectStorer: newStorage(filepath.Join(r.Dir(), ".git"), false), reads: map[plumbing.Hash]int{}}
			m := &memo{EncodedObjectStorer: count, loose: filepath.Join(r.Dir(), ".git", "objects"), objs: map[plumbing.Hash]plumbing.EncodedObject{}}
			if _, err := m.EncodedObject(plumbing.BlobObject, c.TreeHash); err != plumbing.ErrObjectNotFound {
				t.Errorf("the root tree asked for as a blob: %v, want %v", err, plumbing.ErrObjectNotFound)
			}
			o, err := m.EncodedObject(plumbing.BlobObject, e.Hash)
			if reached := count.reads[e.Hash] > 0; reached != tc.wantStore {
				t.Errorf("reached the store: %v, want %v", reached, tc.wantStore)
			}
			if tc.wantErr {
				if err == nil {
					b, _ := readObject(o)
					t.Fatalf("a damaged object read as %q, want an error", b)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, err := readObject(o); err != nil || b != files[tc.file] {
				t.Errorf("read %d bytes (%v), want %d", len(b), err, len(files[tc.file]))
			}
		})
	}
}

func readObject(o plumbing.EncodedObject) (string, error) {
	r, err := o.Reader()
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

// TestWriteTreeTakesNoBufferPerFile: writing a skill's files copies each
// through a pooled buffer; io.Copy into an *os.File took a new 32 KiB one
// per file, 56 MB for an `add --all` of 1,000 skills.
func TestWriteTreeTakesNoBufferPerFile(t *testing.T) {
	const files = 64
	tree := map[string]string{}
	for i := range files {
		tree[fmt.Sprintf("s/f%02d.md", i)] = strings.Repeat("w", 2000)
	}
	r := gittest.NewRepo(t, tree)
	snap := headSnapshot(t, r)
	dst := t.TempDir()
	// The first write fills the memo and the pool.
	if err := WriteTree(snap.FS, "s", filepath.Join(dst, "one"), Limits{}); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := WriteTree(snap.FS, "s", filepath.Join(dst, "two"), Limits{}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// Paths, entries and file handles take a few hundred bytes a file;
	// under -race sync.Pool drops a quarter of its buffers.
	if per := (after.TotalAlloc - before.TotalAlloc) / files; per > 16<<10 {
		t.Errorf("writing allocated %d bytes per file, want under 16 KiB (no 32 KiB copy buffer each)", per)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "two", "f07.md")); err != nil || string(b) != tree["s/f07.md"] {
		t.Errorf("f07.md: %d bytes, %v", len(b), err)
	}
}
