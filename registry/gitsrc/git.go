package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/agentskills/agent/registry/ocisrc"
)

// Git fetches one commit of a repository. GoGit is the real
// implementation; it is an interface so that tests can count or fail
// fetches.
type Git interface {
	// Fetch resolves req against the repository's refs and returns that
	// commit's tree, fetching no more than it must.
	Fetch(ctx context.Context, req FetchRequest) (*Snapshot, error)
}

// GoGit fetches with go-git. Network failures are retried Tries times with
// a doubling backoff. Fetched objects stay in FetchRequest.CacheDir, so
// that adding several skills from one repository transfers it once and an
// update transfers only what is new.
type GoGit struct {
	Tries   int                                              // default 3
	Backoff time.Duration                                    // first delay; default 1s
	Sleep   func(ctx context.Context, d time.Duration) error // default waits on a timer; tests make it instant
	// Debug receives what a user needs only when asking why a fetch was
	// slow, such as a fallback to the full history (hclog's Debug fits).
	Debug func(msg string, kv ...any)
}

const defaultBackoff = time.Second

var _ Git = (*GoGit)(nil)

var installTransports sync.Once

// Network timeouts for http(s) clones. A host that accepts nothing or
// never answers fails a try instead of hanging; Clone then retries.
const (
	dialTimeout           = 15 * time.Second
	responseHeaderTimeout = 60 * time.Second
)

// useOwnTransports adjusts go-git's process-wide transports once:
//   - file:// normally runs the git-upload-pack binary; it is replaced by
//     go-git's in-process server, so the product never runs git;
//   - http(s) get a client with dial, TLS and response-header timeouts.
func useOwnTransports() {
	installTransports.Do(func() {
		client.InstallProtocol("file", server.NewServer(localLoader{}))
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
		tr.TLSHandshakeTimeout = dialTimeout
		tr.ResponseHeaderTimeout = responseHeaderTimeout
		hc := githttp.NewClient(&http.Client{Transport: tr})
		client.InstallProtocol("http", hc)
		client.InstallProtocol("https", hc)
	})
}

// serverCacheSize bounds the in-process file server's object cache. The
// default (96 MiB) would keep a hostile repository's huge blobs in memory
// next to the client's copy; objects larger than the cache are not cached.
const serverCacheSize = 4 << 20

// streamAbove is the size over which an object is read from disk as it
// is used instead of into memory when it is opened (go-git's
// LargeObjectThreshold; 0 would read every object whole, so that merely
// asking a 1 GiB blob its size would allocate 1 GiB).
const streamAbove = 1 << 20

// newStorage opens the object store of a git directory with a small
// object cache and large objects streamed. With keepOpen its pack files
// stay open between reads until the storage is closed (Snapshot.Close):
// otherwise go-git opens the pack again for every object it reads (an
// `add --all` of 1,000 skills over http spent a seventh of its time so).
func newStorage(gitDir string, keepOpen bool) *diskStore {
	opts := filesystem.Options{LargeObjectThreshold: streamAbove}
	if keepOpen {
		opts.MaxOpenDescriptors = openPacks
	}
	return &diskStore{Storage: filesystem.NewStorageWithOptions(osfs.New(gitDir), cache.NewObjectLRU(serverCacheSize), opts)}
}

// diskStore is a store newStorage opened.
type diskStore struct {
	*filesystem.Storage
	// loose is the objects folder of a local repository, whose loose
	// objects a snapshot's memo reads straight (memo.readLoose); "" for
	// a fetch cache, which holds packs only.
	loose string
}

// openPacks is how many pack files a kept-open store holds open: a cache
// repository gains one pack per fetch.
const openPacks = 8

// localLoader opens a local repository, bare or not, for the in-process
// file transport.
type localLoader struct{}

func (localLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	p := ep.Path
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return nil, transport.ErrRepositoryNotFound
	}
	if gi, err := os.Stat(p + "/.git"); err == nil && gi.IsDir() {
		p += "/.git"
	} else if _, err := os.Stat(p + "/HEAD"); err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	return newStorage(p, false), nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// CheckCloneURL refuses anything but the allowed schemes, scp-like ssh and
// absolute local paths, so that a hand-edited registry cannot smuggle in a
// command transport either.
func CheckCloneURL(u string) error {
	if ocisrc.IsOCI(u) {
		if _, err := ocisrc.Parse(u); err != nil {
			return fmt.Errorf("%w: %v", ErrUnsupportedSource, err)
		}
		return nil
	}
	if transportRE.MatchString(u) {
		return fmt.Errorf("clone %s: %w: command transports (transport::) are refused", u, ErrUnsupportedSource)
	}
	if m := schemeRE.FindStringSubmatch(u); m != nil {
		if !allowedSchemes[strings.ToLower(m[1])] {
			return fmt.Errorf("clone %s: %w: scheme %q", u, ErrUnsupportedSource, m[1])
		}
		return nil
	}
	if strings.HasPrefix(u, "/") || scpRE.MatchString(u) {
		return nil
	}
	return fmt.Errorf("clone %s: %w: not a URL or absolute path", u, ErrUnsupportedSource)
}

// classifyGitError maps go-git and network errors to the package sentinels,
// keeping the original text for detail.
func classifyGitError(u string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded) && !isNetErr(err):
		return err
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w: %s does not exist or is not a git repository; check the URL", ErrRepoNotFound, u)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrInvalidAuthMethod):
		return fmt.Errorf("%w: %s asked for credentials (a private repository, or one that does not exist); check the URL, or use an ssh URL (git@host:owner/repo) with a running ssh-agent", ErrAuthRequired, u)
	case errors.Is(err, transport.ErrEmptyRemoteRepository), errors.Is(err, plumbing.ErrReferenceNotFound):
		return fmt.Errorf("%w: %s is an empty repository; push a commit with a SKILL.md first", ErrNoSkill, u)
	case isNetErr(err):
		return fmt.Errorf("%w: cannot reach %s (%v); check the network and the host name, then try again", ErrUnreachable, u, err)
	}
	return err
}

func isNetErr(err error) bool {
	var ne net.Error
	var ue *url.Error
	var oe *net.OpError
	var de *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &de) || errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrDeadlineExceeded)
}

// target is a resolved commit.
type target struct {
	Hash    plumbing.Hash
	Kind    string // "branch", "tag", "commit" or "default"
	Ref     string // the ref that was resolved (the tag name for a constraint)
	Version string // the tag's semver version, without a v prefix
	// Tag is the annotated tag object a tag ref names (its signature is
	// checked); zero for a lightweight tag or any other ref.
	Tag plumbing.Hash
}

func IsHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

func peel(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, bool) {
	for i := 0; i < 10; i++ {
		if t, err := repo.TagObject(h); err == nil {
			if t.TargetType != plumbing.CommitObject && t.TargetType != plumbing.TagObject {
				return plumbing.ZeroHash, false
			}
			h = t.Target
			continue
		}
		if _, err := repo.CommitObject(h); err == nil {
			return h, true
		}
		return plumbing.ZeroHash, false
	}
	return plumbing.ZeroHash, false
}

// treeFiles maps the slash paths of files under dir (relative to it) in
// commit h to their blob hashes; symlinks map to the hash of their target.
func treeFiles(repo *git.Repository, h plumbing.Hash, dir string) (map[string]plumbing.Hash, error) {
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, err
	}
	if dir != "" && dir != "." {
		if tree, err = tree.Tree(dir); err != nil {
			return nil, err
		}
	}
	return filesOf(tree)
}

// filesOf maps the files under tree (slash paths) to their blob hashes.
func filesOf(tree *object.Tree) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if e.Mode.IsFile() {
			out[name] = e.Hash
		}
	}
	return out, nil
}

// Short is a commit id (or an OCI manifest digest) shortened to 12
// characters, for messages.
func Short(sha string) string {
	if d, ok := strings.CutPrefix(sha, "sha256:"); ok && len(d) > 12 {
		return "sha256:" + d[:12]
	}
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
