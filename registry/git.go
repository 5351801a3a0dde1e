package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/Masterminds/semver/v3"
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
)

// Git clones repositories. GoGit is the real implementation; it is an
// interface so that tests can count or fail clones.
type Git interface {
	// Clone clones url into dir (which must not exist or be empty) with all
	// branches and tags and no checkout.
	Clone(ctx context.Context, url, dir string, progress io.Writer) (*git.Repository, error)
}

// GoGit clones with go-git. Network failures are retried Tries times with a
// doubling backoff.
type GoGit struct {
	Tries   int                                              // default 3
	Backoff time.Duration                                    // first delay; default 1s
	Sleep   func(ctx context.Context, d time.Duration) error // default waits on a timer; tests make it instant
}

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
	return filesystem.NewStorage(osfs.New(p), cache.NewObjectLRU(serverCacheSize)), nil
}

// Clone implements Git.
func (g *GoGit) Clone(ctx context.Context, rawURL, dir string, progress io.Writer) (*git.Repository, error) {
	if err := checkCloneURL(rawURL); err != nil {
		return nil, err
	}
	useOwnTransports()
	tries, backoff, sleep := g.Tries, g.Backoff, g.Sleep
	if tries <= 0 {
		tries = 3
	}
	if backoff <= 0 {
		backoff = time.Second
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	opts := &git.CloneOptions{URL: rawURL, NoCheckout: true, Tags: git.AllTags}
	if progress != nil {
		opts.Progress = progress
	}
	var err error
	for try := 1; ; try++ {
		var repo *git.Repository
		repo, err = git.PlainCloneContext(ctx, dir, false, opts)
		if err == nil {
			return repo, nil
		}
		_ = os.RemoveAll(dir)
		err = classifyGitError(rawURL, err)
		if !errors.Is(err, ErrUnreachable) || try >= tries || ctx.Err() != nil {
			break
		}
		if serr := sleep(ctx, backoff); serr != nil {
			break
		}
		backoff *= 2
	}
	if errors.Is(err, ErrUnreachable) {
		return nil, fmt.Errorf("clone %s (%d tries): %w", rawURL, tries, err)
	}
	return nil, fmt.Errorf("clone %s: %w", rawURL, err)
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

// checkCloneURL refuses anything but the allowed schemes, scp-like ssh and
// absolute local paths, so that a hand-edited registry cannot smuggle in a
// command transport either.
func checkCloneURL(u string) error {
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
}

// resolveRef finds the commit that ref names in a fresh clone: a branch, a
// tag, or a full or short SHA. "" means the remote's default branch.
func resolveRef(repo *git.Repository, ref string) (target, error) {
	if ref == "" {
		h, err := repo.Head()
		if err != nil {
			return target{}, fmt.Errorf("resolve default branch: %w: the repository has no default branch; name a branch or tag with @ref", ErrRefNotFound)
		}
		return target{Hash: h.Hash(), Kind: "default"}, nil
	}
	if r, err := repo.Reference(plumbing.NewRemoteReferenceName("origin", ref), true); err == nil {
		return target{Hash: r.Hash(), Kind: "branch", Ref: ref}, nil
	}
	// A version typed as 1.2.0 finds the tag v1.2.0 and the other way round.
	names := []string{ref}
	if fullVersionRE.MatchString(ref) {
		if strings.HasPrefix(ref, "v") {
			names = append(names, ref[1:])
		} else {
			names = append(names, "v"+ref)
		}
	}
	for _, name := range names {
		if h, ok := tagCommit(repo, name); ok {
			t := target{Hash: h, Kind: "tag", Ref: name}
			if v, err := semver.NewVersion(name); err == nil {
				t.Version = v.String()
			}
			return t, nil
		}
	}
	if shaRE.MatchString(ref) || (len(ref) >= 4 && len(ref) <= 40 && isHex(ref)) {
		if len(ref) == 40 {
			if c, err := repo.CommitObject(plumbing.NewHash(ref)); err == nil {
				return target{Hash: c.Hash, Kind: "commit", Ref: ref}, nil
			}
		} else if h, err := repo.ResolveRevision(plumbing.Revision(ref)); err == nil {
			if c, err := repo.CommitObject(*h); err == nil {
				return target{Hash: c.Hash, Kind: "commit", Ref: ref}, nil
			}
		}
	}
	return target{}, fmt.Errorf("resolve %q: %w: no branch, tag or commit named %q; available: %s", ref, ErrRefNotFound, ref, refList(repo))
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// tagCommit peels refs/tags/<name> (lightweight or annotated) to a commit.
func tagCommit(repo *git.Repository, name string) (plumbing.Hash, bool) {
	r, err := repo.Reference(plumbing.NewTagReferenceName(name), true)
	if err != nil {
		return plumbing.ZeroHash, false
	}
	return peel(repo, r.Hash())
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

// refList names a few branches and tags, for "not found" messages.
func refList(repo *git.Repository) string {
	var names []string
	if refs, err := repo.References(); err == nil {
		_ = refs.ForEach(func(r *plumbing.Reference) error {
			n := r.Name()
			switch {
			case n.IsRemote() && !strings.HasSuffix(n.String(), "/HEAD"):
				names = append(names, strings.TrimPrefix(n.Short(), "origin/"))
			case n.IsTag():
				names = append(names, n.Short())
			}
			return nil
		})
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "(none)"
	}
	if len(names) > 20 {
		names = append(names[:20], "…")
	}
	return strings.Join(names, ", ")
}

type versionTag struct {
	Name    string
	Version *semver.Version
	Hash    plumbing.Hash
}

// versionTags lists tags that parse as semver (v prefix allowed), highest
// first.
func versionTags(repo *git.Repository) ([]versionTag, error) {
	iter, err := repo.Tags()
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	var out []versionTag
	err = iter.ForEach(func(r *plumbing.Reference) error {
		name := r.Name().Short()
		v, err := semver.NewVersion(name)
		if err != nil {
			return nil
		}
		if h, ok := peel(repo, r.Hash()); ok {
			out = append(out, versionTag{Name: name, Version: v, Hash: h})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list tags: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version.GreaterThan(out[j].Version) })
	return out, nil
}

// resolveConstraint picks the highest semver tag matching constraint.
func resolveConstraint(repo *git.Repository, constraint string) (target, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return target{}, fmt.Errorf("resolve %q: %w: not a version constraint: %v", constraint, ErrNoMatchingVersion, err)
	}
	tags, err := versionTags(repo)
	if err != nil {
		return target{}, err
	}
	for _, t := range tags {
		if c.Check(t.Version) {
			return target{Hash: t.Hash, Kind: "tag", Ref: t.Name, Version: t.Version.String()}, nil
		}
	}
	if len(tags) == 0 {
		return target{}, fmt.Errorf("resolve %q: %w: the repository has no version tags (like v1.2.0); install a branch or commit with @ref instead", constraint, ErrNoMatchingVersion)
	}
	var avail []string
	for _, t := range tags {
		avail = append(avail, t.Version.String())
	}
	if len(avail) > 20 {
		avail = append(avail[:20], "…")
	}
	return target{}, fmt.Errorf("resolve %q: %w: no tag matches %s; available versions: %s", constraint, ErrNoMatchingVersion, constraint, strings.Join(avail, ", "))
}

// checkout writes the tree of commit h into repo's work tree.
func checkout(repo *git.Repository, h plumbing.Hash) error {
	wt, err := repo.Worktree()
	if err != nil {
		return fmt.Errorf("checkout %s: %w", h, err)
	}
	if err := wt.Checkout(&git.CheckoutOptions{Hash: h, Force: true}); err != nil {
		return fmt.Errorf("checkout %s: %w", h, err)
	}
	return nil
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
