package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RunGit runs the real git binary in the work tree with a clean
// configuration (no system or user config) and returns its output. Tests
// use it for what go-git cannot do: signed commits and tags.
func (r *Repo) RunGit(t testing.TB, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("gittest: git binary not found")
	}
	cmd := exec.Command(bin, append([]string{"-c", "user.name=gittest", "-c", "user.email=gittest@example.com"}, args...)...)
	cmd.Dir = r.dir
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, "gitconfig"),
		"GIT_AUTHOR_DATE=2025-01-02T00:00:00Z", "GIT_COMMITTER_DATE=2025-01-02T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gittest: git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// SSHSign runs git with an SSH signing key (gpg.format=ssh): for
// `commit -S` and `tag -s`.
func (r *Repo) SSHSign(t testing.TB, key string, args ...string) string {
	t.Helper()
	return r.RunGit(t, append([]string{"-c", "gpg.format=ssh", "-c", "user.signingkey=" + key}, args...)...)
}

// SSHKey makes an ed25519 key pair with the real ssh-keygen in a temp
// folder and returns the private key's path and the public key line.
func SSHKey(t testing.TB, comment string) (string, string) {
	t.Helper()
	bin, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("gittest: ssh-keygen not found (Debian package openssh-client)")
	}
	p := filepath.Join(t.TempDir(), "id_ed25519")
	if out, err := exec.Command(bin, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", p).CombinedOutput(); err != nil {
		t.Fatalf("gittest: ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(p + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return p, strings.TrimSpace(string(pub))
}
