package gitsrc

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// TestSnapshotCloseReleasesPacks: a fetched snapshot keeps its cache's
// pack files open while it is read (go-git would open the pack again for
// every object), and Close gives them back, so that the cache can be
// removed (Windows refuses to remove an open file) and a long-lived
// process does not pile up descriptors.
func TestSnapshotCloseReleasesPacks(t *testing.T) {
	files := map[string]string{}
	for i := range 20 {
		files[fmt.Sprintf("skills/s%02d/SKILL.md", i)] = string(skillFile(fmt.Sprintf("s%02d", i)).Data)
	}
	r := gittest.NewRepo(t, files)
	cache := t.TempDir()
	snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: gittest.ServeRepo(t, r), CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if _, err := fs.ReadFile(snap.FS, name); err != nil {
			t.Fatal(err)
		}
	}
	if n := openUnder(t, cache); n == 0 {
		t.Fatalf("no pack file of the cache is open after reading the snapshot: keepOpen did nothing")
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openUnder(t, cache); n != 0 {
		t.Fatalf("%d files of the cache are still open after Close", n)
	}
	// Still readable: the store opens the pack again.
	if _, err := fs.ReadFile(snap.FS, "skills/s00/SKILL.md"); err != nil {
		t.Fatalf("read after Close: %v", err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
}

// openUnder counts this process's open files under dir.
func openUnder(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}
