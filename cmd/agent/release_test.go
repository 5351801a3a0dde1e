package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentskills/agent/cmd/agent/internal/cli"
	"github.com/agentskills/agent/internal/testutil/gittest"
)

// TestReleaseArchive builds this platform's release archive with the
// real `make release` (only this platform, into a temp folder), checks
// it against SHA256SUMS, unpacks it into a fresh folder and, with an
// empty AGENT_HOME, runs the agent in it: `agent version` names the
// version, the commit git reports and the platform, and `agent skill
// add` installs a skill from a real git repository over file://.
func TestReleaseArchive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("make release runs under a POSIX shell; the Windows zip is built on Linux and macOS")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed to build the release archive (.ci/run installs it): %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	dist := filepath.Join(t.TempDir(), "dist")
	mk := exec.Command("make", "-s", "release", "PLATFORMS="+platform, "DIST="+dist)
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}
	name := fmt.Sprintf("agent_%s_%s_%s", cli.Version, runtime.GOOS, runtime.GOARCH)
	archive := filepath.Join(dist, name+".tar.gz")
	checkSum(t, filepath.Join(dist, "SHA256SUMS"), archive)

	fresh := t.TempDir()
	untar(t, archive, fresh)
	bin := filepath.Join(fresh, name, "agent")
	if _, err := os.Stat(filepath.Join(fresh, name, "README.md")); err != nil {
		t.Errorf("the archive has no README.md: %v", err)
	}
	home := filepath.Join(t.TempDir(), "agent-home")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = fresh
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AGENT_HOME=" + home}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agent %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	commit := "unknown"
	if out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	want := fmt.Sprintf("%s\ncommit: %s\nplatform: %s\n", cli.Version, commit, platform)
	if got := run("version"); got != want {
		t.Errorf("agent version:\n%s\nwant:\n%s", got, want)
	}

	repo := gittest.NewRepo(t, map[string]string{
		"SKILL.md": "---\nname: release-check\ndescription: Proves that a released agent installs skills.\n---\n\nSay hello.\n",
	})
	run("skill", "add", repo.FileURL(), "--trust")
	if list := run("skill", "list"); !strings.Contains(list, "release-check") || !strings.Contains(list, repo.Head(t)[:7]) {
		t.Errorf("agent skill list does not show release-check at %s:\n%s", repo.Head(t)[:7], list)
	}
}

// checkSum finds file's line in the SHA256SUMS file sums and compares.
func checkSum(t *testing.T, sums, file string) {
	t.Helper()
	b, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	want := hex.EncodeToString(h[:]) + "  " + filepath.Base(file)
	for _, line := range strings.Split(string(b), "\n") {
		if line == want {
			return
		}
	}
	t.Fatalf("SHA256SUMS has no line %q:\n%s", want, b)
}

// untar unpacks a .tar.gz into dir, refusing names that leave it.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsLocal(h.Name) {
			t.Fatalf("archive entry %q leaves the folder", h.Name)
		}
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, h.FileInfo().Mode().Perm())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("archive entry %q has type %c; want files and folders only", h.Name, h.Typeflag)
		}
	}
}

// TestMakeBuildStamps: `make build`, the README's way to build from a
// clone, stamps the commit as `make release` does, so that `agent version`
// never says "commit: unknown" for a build from git.
func TestMakeBuildStamps(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("make runs under a POSIX shell")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make is needed (.ci/run installs it): %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	commit := strings.TrimSpace(string(out))
	bin := filepath.Join(t.TempDir(), "agent")
	mk := exec.Command("make", "-s", "build", "BIN="+bin)
	mk.Dir = root
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	got, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("agent version: %v\n%s", err, got)
	}
	if want := "commit: " + commit + "\n"; !strings.Contains(string(got), want) {
		t.Errorf("agent version after make build:\n%s\nwant a line %q", got, want)
	}
}
