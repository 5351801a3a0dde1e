package base

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentskills/agent/sdk/sdktest"
)

const secret = "TOP SECRET outside the workspace"

// escapeFixture is a workspace next to a folder it must never reach, with
// links that lead out, and an AGENT_HOME inside the workspace.
type escapeFixture struct {
	*testWS
	parent, outside string
}

func newEscapeFixture(t *testing.T) *escapeFixture {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	outside := filepath.Join(parent, "outside")
	home := filepath.Join(ws, ".agent-home")
	writeFiles(t, outside, map[string]string{"secret.txt": secret, "img.png": pngBytes, "doc.pdf": pdfBytes})
	writeFiles(t, ws, map[string]string{"inside.txt": "inside\n", "dir/x.txt": "x\n"})
	writeFiles(t, home, map[string]string{"secret.txt": secret, "state/registry.json": secret})
	for link, target := range map[string]string{
		"link_out":        "../outside",
		"link_out_file":   "../outside/secret.txt",
		"link_abs":        outside,
		"link_abs_file":   filepath.Join(outside, "secret.txt"),
		"dir/link_up":     "../../outside",
		"link_home":       ".agent-home",
		"link_home_file":  ".agent-home/secret.txt",
		"dir/link_loop":   "link_loop",
		"link_img":        "../outside/img.png",
		"link_inside":     "inside.txt",
		"dir/link_parent": "..",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	c := sdktest.Run(t, New(Config{Root: ws, Home: home, Environ: os.Environ()}))
	return &escapeFixture{testWS: &testWS{t: t, dir: ws, home: home, c: c}, parent: parent, outside: outside}
}

// outsideState is every file outside the workspace, plus AGENT_HOME.
func (f *escapeFixture) outsideState() map[string]string {
	f.t.Helper()
	s := snapshot(f.t, f.outside)
	for k, v := range snapshot(f.t, f.home) {
		s["home/"+k] = v
	}
	ents, _ := os.ReadDir(f.parent)
	for _, e := range ents {
		if e.Name() != "ws" && e.Name() != "outside" {
			s["parent/"+e.Name()] = "?"
		}
	}
	return s
}

var hostilePaths = []string{
	"..",
	"../outside/secret.txt",
	"../outside/new.txt",
	"../../etc/passwd",
	"dir/../../outside/secret.txt",
	"/etc/passwd",
	"/outside-new.txt",
	"link_out/secret.txt",
	"link_out/new.txt",
	"link_out_file",
	"link_abs/secret.txt",
	"link_abs_file",
	"dir/link_up/secret.txt",
	"dir/link_parent/../outside/secret.txt",
	"dir/link_loop",
	"link_img",
	".agent-home/secret.txt",
	".agent-home/state/registry.json",
	".agent-home/new.txt",
	"link_home/secret.txt",
	"link_home/new.txt",
	"link_home_file",
	"./.agent-home",
	"inside.txt\x00../outside/secret.txt",
	"\x00",
}

// TestEscapes calls every path-taking tool with every hostile path: each
// call fails, nothing outside the workspace (or in AGENT_HOME) is read or
// changed, and no answer holds the secret.
func TestEscapes(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	f.outside = filepath.Join(f.parent, "outside")
	before := f.outsideState()
	abs := func(p string) string {
		return strings.ReplaceAll(p, "/outside-new.txt", filepath.Join(f.outside, "new.txt"))
	}
	calls := func(p string) []struct {
		tool string
		args map[string]any
	} {
		return []struct {
			tool string
			args map[string]any
		}{
			{"read_file", map[string]any{"path": p}},
			{"write_file", map[string]any{"path": p, "content": "pwned"}},
			{"edit_file", map[string]any{"path": p, "old_text": "TOP", "new_text": "pwned"}},
			{"list_dir", map[string]any{"dir_path": p}},
			{"grep_files", map[string]any{"pattern": "SECRET", "path": p}},
			{"read_image_file", map[string]any{"path": p}},
			{"read_pdf_file", map[string]any{"path": p}},
			{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: " + p + "\n+pwned\n*** End Patch"}},
			{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: " + p + "\n*** End Patch"}},
			{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: " + p + "\n@@\n-" + secret + "\n+pwned\n*** End Patch"}},
			{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: inside.txt\n*** Move to: " + p + "\n*** End Patch"}},
			{"exec", map[string]any{"command": "pwd", "cwd": p}},
			{"shell_command", map[string]any{"command": "pwd", "workdir": p}},
		}
	}
	for _, p := range hostilePaths {
		p = abs(p)
		for _, c := range calls(p) {
			if c.tool == "apply_patch" && strings.ContainsAny(p, "\x00") {
				continue // a NUL cannot be part of a patch line the parser accepts as a path
			}
			res, err := f.c.Call(context.Background(), c.tool, c.args)
			if err == nil {
				if c.tool == "list_dir" || c.tool == "grep_files" || c.tool == "exec" || c.tool == "shell_command" {
					if strings.Contains(string(res.Value), "SECRET") || strings.Contains(string(res.Value), "secret.txt") || strings.Contains(string(res.Value), f.outside) {
						t.Errorf("%s %q reached outside: %s", c.tool, p, res.Value)
					}
					continue
				}
				t.Errorf("%s %q succeeded: %s", c.tool, p, res.Value)
				continue
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("%s %q: the error shows the secret: %v", c.tool, p, err)
			}
		}
	}
	if after := f.outsideState(); !equalMaps(before, after) {
		t.Errorf("outside changed:\nbefore %v\nafter  %v", before, after)
	}
	if got := f.read("inside.txt"); got != "inside\n" {
		t.Errorf("inside.txt = %q: a refused move must leave its source", got)
	}
}

func TestHomeHiddenInsideWorkspace(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	var l ListResult
	f.call("list_dir", map[string]any{"depth": 3}, &l)
	if strings.Contains(l.Entries, ".agent-home") || strings.Contains(l.Entries, "registry.json") {
		t.Errorf("list_dir shows AGENT_HOME: %q", l.Entries)
	}
	var g GrepResult
	f.call("grep_files", map[string]any{"pattern": "SECRET"}, &g)
	if len(g.Files) != 0 {
		t.Errorf("grep_files found %q", g.Files)
	}
	// Inside-the-workspace links still work.
	var r ReadResult
	if msg, code := f.call("read_file", map[string]any{"path": "link_inside"}, &r); code != "" || r.Content != "L1: inside\n" {
		t.Errorf("a link inside the workspace: %q %s", code, msg)
	}
}

// TestSymlinkSwap flips a link between a folder inside and one outside the
// workspace while reads and writes go through it. os.Root resolves each
// path component once, so no call ever reads or writes outside.
func TestSymlinkSwap(t *testing.T) {
	t.Parallel()
	f := newEscapeFixture(t)
	before := f.outsideState()
	flip := filepath.Join(f.dir, "flip")
	writeFiles(t, f.dir, map[string]string{"safe/secret.txt": "harmless\n"})
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(f.dir, "flip.tmp")
		for i := 0; !stop.Load(); i++ {
			target := "safe"
			if i%2 == 1 {
				target = "../outside"
			}
			os.Remove(tmp)
			if err := os.Symlink(target, tmp); err == nil {
				os.Rename(tmp, flip) // atomic swap
			}
		}
	}()
	const rounds = 300
	reads, writes := 0, 0
	for i := 0; i < rounds; i++ {
		res, err := f.c.Call(context.Background(), "read_file", map[string]any{"path": "flip/secret.txt"})
		if err == nil {
			reads++
			if strings.Contains(string(res.Value), "SECRET") {
				t.Fatalf("read outside through a swapped link: %s", res.Value)
			}
		}
		if _, err := f.c.Call(context.Background(), "write_file", map[string]any{"path": "flip/new.txt", "content": "w"}); err == nil {
			writes++
		}
		f.c.Call(context.Background(), "grep_files", map[string]any{"pattern": "SECRET", "path": "flip"})
	}
	stop.Store(true)
	wg.Wait()
	if after := f.outsideState(); !equalMaps(before, after) {
		t.Errorf("outside changed:\nbefore %v\nafter  %v", before, after)
	}
	t.Logf("%d of %d reads and %d writes went through while the link pointed inside", reads, rounds, writes)
}
