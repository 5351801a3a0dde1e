package gittest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Repo is a non-bare git repository in a test's temp dir.
type Repo struct {
	dir  string
	repo *git.Repository

	mu   sync.Mutex
	when time.Time // commit times increase by one second per commit
}

// NewRepo creates a repository named "repo" in a fresh temp dir, with files
// (slash path -> content) committed on branch main. files may be nil, which
// leaves the repository without commits.
func NewRepo(t testing.TB, files map[string]string) *Repo {
	t.Helper()
	return NewRepoIn(t, filepath.Join(t.TempDir(), "repo"), files)
}

// NewRepoIn is NewRepo at dir, for several repositories under one root
// that Serve exposes.
func NewRepoIn(t testing.TB, dir string, files map[string]string) *Repo {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatalf("gittest: init %s: %v", dir, err)
	}
	r := &Repo{dir: dir, repo: g, when: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if files != nil {
		r.Commit(t, files, "initial")
	}
	return r
}

// Dir is the work tree.
func (r *Repo) Dir() string { return r.dir }

// Name is the repository's folder name, its path under Serve's root.
func (r *Repo) Name() string { return filepath.Base(r.dir) }

// FileURL is a file:// URL for the repository.
func (r *Repo) FileURL() string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(r.dir)}).String()
}

// Git is the underlying go-git repository.
func (r *Repo) Git() *git.Repository { return r.repo }

// Commit writes files (slash path -> content; parents are created), stages
// every change in the work tree, including deletions, and commits. It
// returns the new commit's SHA.
func (r *Repo) Commit(t testing.TB, files map[string]string, msg string) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	wt, err := r.repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatalf("gittest: add: %v", err)
	}
	r.when = r.when.Add(time.Second)
	sig := &object.Signature{Name: "gittest", Email: "gittest@example.com", When: r.when}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		t.Fatalf("gittest: commit: %v", err)
	}
	return h.String()
}

// Remove deletes paths from the work tree; the next Commit records it.
func (r *Repo) Remove(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.RemoveAll(filepath.Join(r.dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
}

// Symlink creates a symbolic link name -> target in the work tree; the next
// Commit records it.
func (r *Repo) Symlink(t testing.TB, name, target string) {
	t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// Head is the SHA of HEAD.
func (r *Repo) Head(t testing.TB) string {
	t.Helper()
	h, err := r.repo.Head()
	if err != nil {
		t.Fatalf("gittest: head: %v", err)
	}
	return h.Hash().String()
}

// Tag creates a lightweight tag at HEAD.
func (r *Repo) Tag(t testing.TB, name string) {
	t.Helper()
	if _, err := r.repo.CreateTag(name, plumbing.NewHash(r.Head(t)), nil); err != nil {
		t.Fatalf("gittest: tag %s: %v", name, err)
	}
}

// AnnotatedTag creates an annotated tag at HEAD.
func (r *Repo) AnnotatedTag(t testing.TB, name, msg string) {
	t.Helper()
	sig := &object.Signature{Name: "gittest", Email: "gittest@example.com", When: r.when}
	if _, err := r.repo.CreateTag(name, plumbing.NewHash(r.Head(t)), &git.CreateTagOptions{Tagger: sig, Message: msg}); err != nil {
		t.Fatalf("gittest: tag %s: %v", name, err)
	}
}

// Branch creates branch name at HEAD (if it does not exist) and checks it
// out, so that the next Commit goes there.
func (r *Repo) Branch(t testing.TB, name string) {
	t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	ref := plumbing.NewBranchReferenceName(name)
	_, err = r.repo.Reference(ref, false)
	create := err != nil
	if err := wt.Checkout(&git.CheckoutOptions{Branch: ref, Create: create, Keep: true}); err != nil {
		t.Fatalf("gittest: branch %s: %v", name, err)
	}
}

// Serve serves every repository under root over loopback HTTP with `git
// http-backend` and returns the base URL: a repository at root/name is at
// baseURL+"/"+name. The server is closed at the end of the test. The test
// is skipped if git is not installed.
func Serve(t testing.TB, root string) string {
	t.Helper()
	return ServeHandler(t, Handler(t, root))
}

// PartialClone is the server configuration under which a protocol v0
// client (go-git) can fetch a commit's trees without blobs (filter
// blob:none) and then blobs by id.
var PartialClone = []string{"uploadpack.allowFilter=true", "uploadpack.allowAnySHA1InWant=true"}

// Handler is `git http-backend` through net/http/cgi for the repositories
// under root, with config (key=value, as git -c takes them) set for the
// server's git.
func Handler(t testing.TB, root string, config ...string) http.Handler {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("gittest: git binary not found; needed for git http-backend")
	}
	return &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Dir:  root,
		// http-backend reports a missing repository on stderr too; the
		// client sees the 404, which is what tests check.
		Stderr: io.Discard,
		Env: append([]string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"HOME=" + root,
		}, configEnv(config)...),
	}
}

// ServeHandler serves h on loopback until the end of the test and
// returns its URL.
func ServeHandler(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// configEnv passes git config through the environment
// (GIT_CONFIG_COUNT, git 2.31+), which git's children inherit.
func configEnv(config []string) []string {
	env := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(config))}
	for i, kv := range config {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, k), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, v))
	}
	return env
}

// ServeDaemon serves every repository under root with `git daemon` over
// git:// on loopback, with config (key=value) set for its upload-pack, and
// returns the base URL. The daemon is stopped at the end of the test.
func ServeDaemon(t testing.TB, root string, config ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("gittest: git binary not found; needed for git daemon")
	}
	// git daemon cannot report the port it chose: take a free one.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().(*net.TCPAddr)
	l.Close()
	// git-daemon itself, not `git daemon`: that wrapper runs it as a child,
	// which a kill of the wrapper left running after every test.
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("gittest: git --exec-path: %v", err)
	}
	cmd := exec.Command(filepath.Join(strings.TrimSpace(string(execPath)), "git-daemon"), "--reuseaddr", "--export-all", "--base-path="+root,
		"--listen=127.0.0.1", "--port="+strconv.Itoa(addr.Port), root)
	cmd.Env = append(os.Environ(), append([]string{"GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}, configEnv(config)...)...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("gittest: git daemon: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr.String())
		if err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatalf("gittest: git daemon did not listen on %s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "git://" + addr.String()
}

// ServeRepo serves r alone and returns its HTTP clone URL.
func ServeRepo(t testing.TB, r *Repo) string {
	t.Helper()
	return Serve(t, filepath.Dir(r.dir)) + "/" + r.Name()
}
