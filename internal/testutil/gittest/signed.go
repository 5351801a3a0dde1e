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
	return r.runGit(t, nil, args...)
}

func (r *Repo) runGit(t testing.TB, env []string, args ...string) string {
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
	cmd.Env = append(cmd.Env, env...)
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

// GPGKey is an OpenPGP signing key made by the real gpg in a keyring of
// its own.
type GPGKey struct {
	Home        string // GNUPGHOME
	Fingerprint string
	Public      string // gpg --export --armor
}

// NewGPGKey makes an ed25519 OpenPGP key without a passphrase in a fresh
// GNUPGHOME, and stops that keyring's gpg-agent when the test ends.
func NewGPGKey(t testing.TB, uid string) GPGKey {
	t.Helper()
	bin, err := exec.LookPath("gpg")
	if err != nil {
		t.Skip("gittest: gpg not found (Debian package gnupg)")
	}
	// gpg-agent's socket lives in GNUPGHOME, and a socket path is limited
	// to 108 bytes: t.TempDir() names can be longer.
	home, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kill := exec.Command("gpgconf", "--kill", "gpg-agent")
		kill.Env = append(os.Environ(), "GNUPGHOME="+home)
		_ = kill.Run()
		os.RemoveAll(home)
	})
	gpg := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--batch", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		cmd.Env = append(os.Environ(), "GNUPGHOME="+home)
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("gittest: gpg %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		return string(out)
	}
	gpg("--quick-generate-key", uid, "ed25519", "sign", "never")
	var fpr string
	for _, line := range strings.Split(gpg("--with-colons", "--list-secret-keys", uid), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			fpr = f[9]
			break
		}
	}
	if fpr == "" {
		t.Fatal("gittest: gpg made no key")
	}
	return GPGKey{Home: home, Fingerprint: fpr, Public: gpg("--export", "--armor", fpr)}
}

// GPGSign runs git with an OpenPGP signing key (gpg.format=openpgp, the
// default): for `commit -S` and `tag -s`.
func (r *Repo) GPGSign(t testing.TB, key GPGKey, args ...string) string {
	t.Helper()
	return r.runGit(t, []string{"GNUPGHOME=" + key.Home},
		append([]string{"-c", "gpg.format=openpgp", "-c", "user.signingkey=" + key.Fingerprint}, args...)...)
}
