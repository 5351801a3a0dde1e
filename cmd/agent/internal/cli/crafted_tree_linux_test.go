package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// TestCraftedTrees adds repositories whose git objects no `git commit`
// writes (SPEC §12): tree entries named "..", "." or holding "/", and a
// 1 GiB file of zeros that packs into about a megabyte. Each add through
// the real binary exits 1 with an error naming the path, writes nothing
// outside its skill, and stays under 256 MB of memory.
func TestCraftedTrees(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent binary and a 1 GiB blob")
	}
	t.Parallel()
	agent := buildAgent(t)
	const manifest = "---\nname: crafted\ndescription: A skill in a crafted tree.\n---\nBody.\n"

	for _, tc := range []struct {
		name string
		// build writes the crafted objects and returns the root tree.
		build func(c *crafter) plumbing.Hash
		args  []string // after the source
		env   []string
		want  []string // in stderr
	}{
		{
			// writeTree used to slice "skills" by the length of
			// "skills/x/": a panic.
			name: "dotdot in a skill folder",
			build: func(c *crafter) plumbing.Hash {
				evil := c.tree(c.file("evil.txt", "escaped\n"))
				skill := c.tree(c.file("SKILL.md", manifest), c.dir("..", evil))
				return c.tree(c.dir("skills", c.tree(c.dir("x", skill))))
			},
			args: []string{"x"},
			want: []string{`skills/x/..`},
		},
		{
			// At the root, ".." joined the install folder's parent.
			name: "dotdot at the root",
			build: func(c *crafter) plumbing.Hash {
				evil := c.tree(c.file("evil.txt", "escaped\n"))
				return c.tree(c.file("SKILL.md", manifest), c.dir("..", evil))
			},
			want: []string{`".."`},
		},
		{
			// "." named its own folder again: a walk that never ends.
			name: "dot at the root",
			build: func(c *crafter) plumbing.Hash {
				inner := c.tree(c.file("SKILL.md", manifest))
				return c.tree(c.dir(".", inner), c.file("SKILL.md", manifest))
			},
			want: []string{`"."`},
		},
		{
			name: "slash in a name",
			build: func(c *crafter) plumbing.Hash {
				return c.tree(c.file("SKILL.md", manifest), c.dir("scripts", c.tree(c.file("a.py", "print(1)\n"))), c.file("scripts/b.py", "print(2)\n"))
			},
			want: []string{`scripts/b.py`},
		},
		{
			name: "a file over the per-file limit",
			build: func(c *crafter) plumbing.Hash {
				return c.tree(c.file("SKILL.md", manifest), c.file("big.bin", strings.Repeat("x", 2000)))
			},
			env:  []string{"AGENT_MAX_FILE_SIZE=1000"},
			want: []string{"2000 bytes", "1000 bytes per file"},
		},
		{
			name: "a skill over the per-skill limit",
			build: func(c *crafter) plumbing.Hash {
				return c.tree(c.file("SKILL.md", manifest), c.file("a.txt", strings.Repeat("a", 900)), c.file("b.txt", strings.Repeat("b", 900)))
			},
			env:  []string{"AGENT_MAX_SKILL_SIZE=1500"},
			want: []string{"1500", "b.txt"},
		},
		{
			name: "a 1 GiB file of zeros",
			build: func(c *crafter) plumbing.Hash {
				return c.tree(c.file("SKILL.md", manifest), c.entry("zeros.bin", filemode.Regular, c.zeros(1<<30)))
			},
			// Over http the pack is refused as it streams in, before
			// any path is known; from a file:// source the tree is read.
			want: []string{"1073741824 bytes", "max_file_size"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t, map[string]string{"README.md": "crafted\n"})
			c := &crafter{t: t, st: repo.Git().Storer.(*filesystem.Storage), work: repo.Dir()}
			c.commit(tc.build(c))
			sources := map[string]string{"file": repo.FileURL(), "http": gittest.ServeRepo(t, repo)}
			for _, via := range []string{"file", "http"} {
				t.Run(via, func(t *testing.T) {
					home := filepath.Join(t.TempDir(), "home")
					args := append([]string{"skill", "add", sources[via]}, tc.args...)
					cmd := exec.Command(agent, append(args, "--yes")...)
					cmd.Env = append(os.Environ(), append([]string{"AGENT_HOME=" + home}, tc.env...)...)
					var stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = io.Discard, &stderr
					// Peak RSS from the child's own VmHWM, polled while it
					// runs: wait4's Maxrss also counts this test process's
					// memory, which the child shared until it exec'd.
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					done := make(chan struct{})
					peak := make(chan int64, 1)
					go func() {
						var hwm int64
						for {
							if kb := vmHWM(cmd.Process.Pid); kb > hwm {
								hwm = kb
							}
							select {
							case <-done:
								peak <- hwm
								return
							case <-time.After(2 * time.Millisecond):
							}
						}
					}()
					err := cmd.Wait()
					close(done)
					code := cmd.ProcessState.ExitCode()
					rss := <-peak / 1024
					t.Logf("exit %d, peak RSS %d MB", code, rss)
					if code != 1 {
						t.Fatalf("agent %s: %v (exit %d); want exit 1\n%s", strings.Join(args, " "), err, code, stderr.String())
					}
					if strings.Contains(stderr.String(), "panic") || strings.Contains(stderr.String(), "goroutine ") {
						t.Fatalf("agent crashed:\n%s", stderr.String())
					}
					for _, w := range tc.want {
						if !strings.Contains(stderr.String(), w) {
							t.Errorf("stderr does not name %q:\n%s", w, stderr.String())
						}
					}
					if rss > 256 {
						t.Errorf("peak RSS %d MB; want under 256 MB", rss)
					}
					// Nothing escaped, and nothing is installed.
					if found := findFile(t, filepath.Dir(home), "evil.txt"); found != "" {
						t.Errorf("a crafted entry wrote %s", found)
					}
					if b, err := os.ReadFile(filepath.Join(home, "skills", "registry.json")); err == nil && strings.Contains(string(b), "crafted") {
						t.Errorf("registry.json holds the crafted skill:\n%s", b)
					}
				})
			}
		})
	}
}

// findFile returns the first file named name under root, or "".
func findFile(t *testing.T, root, name string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = p
		}
		return nil
	})
	return found
}

// crafter writes raw git objects into a repository's object store, as a
// hostile author can: go-git's Tree.Encode checks only for NUL.
type crafter struct {
	t    *testing.T
	st   *filesystem.Storage
	work string // the repository's work tree, for git itself
}

func (c *crafter) blob(content string) plumbing.Hash {
	c.t.Helper()
	o := c.st.NewEncodedObject()
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		c.t.Fatal(err)
	}
	io.WriteString(w, content)
	w.Close()
	h, err := c.st.SetEncodedObject(o)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

// zeros writes a blob of n zero bytes with git itself (hash-object
// streams a file over core.bigFileThreshold into a pack of its own): a
// sparse file, so nothing holds a copy, and C's zlib, not the race
// detector's (minutes for 1 GiB).
func (c *crafter) zeros(n int64) plumbing.Hash {
	c.t.Helper()
	f := filepath.Join(c.t.TempDir(), "zeros")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Truncate(f, n); err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command("git", "hash-object", "-w", "--", f)
	cmd.Dir = c.work
	out, err := cmd.Output()
	if err != nil {
		c.t.Fatalf("git hash-object: %v", err)
	}
	return plumbing.NewHash(strings.TrimSpace(string(out)))
}

func (c *crafter) entry(name string, mode filemode.FileMode, h plumbing.Hash) object.TreeEntry {
	return object.TreeEntry{Name: name, Mode: mode, Hash: h}
}

func (c *crafter) file(name, content string) object.TreeEntry {
	return c.entry(name, filemode.Regular, c.blob(content))
}

func (c *crafter) dir(name string, h plumbing.Hash) object.TreeEntry {
	return c.entry(name, filemode.Dir, h)
}

func (c *crafter) tree(entries ...object.TreeEntry) plumbing.Hash {
	c.t.Helper()
	sort.Sort(object.TreeEntrySorter(entries))
	t := &object.Tree{Entries: entries}
	o := c.st.NewEncodedObject()
	if err := t.Encode(o); err != nil {
		c.t.Fatal(err)
	}
	h, err := c.st.SetEncodedObject(o)
	if err != nil {
		c.t.Fatal(err)
	}
	return h
}

// commit points main at a new commit of tree.
func (c *crafter) commit(tree plumbing.Hash) {
	c.t.Helper()
	head, err := c.st.Reference(plumbing.NewBranchReferenceName("main"))
	if err != nil {
		c.t.Fatal(err)
	}
	sig := object.Signature{Name: "crafter", Email: "crafter@example.com"}
	cm := &object.Commit{Author: sig, Committer: sig, Message: "crafted", TreeHash: tree, ParentHashes: []plumbing.Hash{head.Hash()}}
	o := c.st.NewEncodedObject()
	if err := cm.Encode(o); err != nil {
		c.t.Fatal(err)
	}
	h, err := c.st.SetEncodedObject(o)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.st.SetReference(plumbing.NewHashReference(head.Name(), h)); err != nil {
		c.t.Fatal(err)
	}
}

// vmHWM is the peak resident set of process pid in KiB, 0 once it is gone.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}
