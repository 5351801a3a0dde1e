package gitsrc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentskills/agent/internal/ground/flock"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/registry/ocisrc"

	"github.com/Masterminds/semver/v3"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

// FetchRequest names one commit of a repository: the commit a ref or a
// version constraint resolves to.
type FetchRequest struct {
	URL string
	// Kind and OCI are the parsed source (Source.Request); a zero Kind
	// means the fetcher classifies URL.
	Kind       Kind
	OCI        ocisrc.Reference
	Ref        string // branch, tag or (short) SHA; "" is the default branch
	Constraint string // a semver constraint over the version tags; excludes Ref
	Progress   io.Writer
	// CacheDir holds one bare repository per remote URL, so that a later
	// fetch of the same repository transfers only new objects. The store
	// sets $AGENT_HOME/cache/git; "" means a directory under os.TempDir.
	CacheDir string
	// Path is the skill folder the caller needs, when it knows it (a
	// pinned fetch): a mirror holds single folders, not whole trees.
	Path string
	// MaxFile is the largest object a fetch takes (0: DefaultFileLimit):
	// the pack parser holds each object whole in memory.
	MaxFile int64
	// Skills, when not nil, allows a partial fetch where the server
	// serves one (filter blob:none, blobs by id): the commit's trees, the
	// files discovery reads, and the files of the skill folders Skills
	// names (a folder's path or base name, as add's selectors; AllSkills
	// names them all). Before reading any other file of the snapshot, the
	// caller calls Snapshot.Need.
	Skills []string
}

// Snapshot is one fetched commit. FS is its tree (slash paths, fs.ValidPath
// names); symbolic links are reported as such and never followed.
type Snapshot struct {
	Commit  string // full SHA
	Kind    string // "branch", "tag", "commit" or "default"
	Ref     string // the ref that was resolved (the tag name for a constraint)
	Version string // the tag's semver version without a v prefix, or ""
	FS      fs.FS
	// Signer is the accepted key that signed what was fetched, when a
	// signer policy checked it (the registry sets it); "" otherwise.
	Signer string
	// Fetched says how the objects came (FetchedFilter, FetchedDepth,
	// ...), for the debug log and the fetch span; "" when unknown.
	Fetched string

	repo    *git.Repository
	partial *partialSource // set when Need may have to fetch blobs
	cache   *cacheOf       // the cache repo lives in, for BlobHashes; nil for a local repository
	tag     plumbing.Hash  // the annotated tag object of a tag ref, or zero
	// worktree is the working tree of a local repository whose checked-out
	// HEAD this snapshot is (no ref asked for), for Uncommitted; local is
	// what its checks share.
	worktree string
	local    *localTree
}

// Close releases the files the snapshot's object store holds open. A
// snapshot stays readable after it (files are opened again); a
// snapshot nobody closes gives them back when it is garbage.
func (s *Snapshot) Close() error {
	if s == nil || s.repo == nil {
		return nil
	}
	return closeStore(s.repo)
}

// closeStore closes the files repo's object store holds open (newStorage
// with keepOpen), as before its folder is removed (dropCache): Windows
// refuses to remove a file that is open.
func closeStore(repo *git.Repository) error {
	if c, ok := repo.Storer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// BlobHashes maps the files under dir in commit sha (slash paths relative
// to dir) to their blob hashes. It fails when the snapshot's repository
// does not hold that commit (a shallow cache that lost it).
//
// The commit's trees are looked for in the repository's other caches too:
// a skill added through a partial fetch and updated at depth 1 (or the
// other way round) has its old commit in the other cache.
func (s *Snapshot) BlobHashes(sha, dir string) (map[string]plumbing.Hash, error) {
	if s == nil || s.repo == nil {
		return nil, plumbing.ErrObjectNotFound
	}
	m, err := treeFiles(s.repo, plumbing.NewHash(sha), dir)
	if err == nil || s.cache == nil {
		return m, err
	}
	for _, kind := range []string{"", blobless, "full"} {
		if kind == s.cache.kind {
			continue
		}
		p := cachePath(s.cache.dir, s.cache.url, kind)
		if _, serr := os.Stat(filepath.Join(p, "HEAD")); serr != nil {
			continue
		}
		repo, oerr := git.Open(newStorage(p, false), nil)
		if oerr != nil {
			continue
		}
		if m, oerr := treeFiles(repo, plumbing.NewHash(sha), dir); oerr == nil {
			return m, nil
		}
	}
	return nil, err
}

// cacheOf names the cache a snapshot's repository is: its folder is
// cachePath(dir, url, kind).
type cacheOf struct{ dir, url, kind string }

// NewSnapshot wraps a commit of an open repository, for Git
// implementations other than GoGit (tests).
func NewSnapshot(repo *git.Repository, commit plumbing.Hash) (*Snapshot, error) {
	c, err := repo.CommitObject(commit)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", commit, err)
	}
	t, err := memoTree(repo, c)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", commit, err)
	}
	return &Snapshot{Commit: commit.String(), Kind: "commit", FS: NewTreeFS(t), repo: repo}, nil
}

// Fetch implements Git. A local path or file:// URL is read in place: the
// commit's tree is read from the repository's own object store, nothing is
// copied. Any other URL is resolved from the remote's advertised refs, then
// that one commit is fetched at depth 1 into a cache under CacheDir, so
// that a later fetch of the same repository transfers only new objects. A
// full fetch is the fallback for a SHA that no ref points to when the
// server does not allow fetching it directly.
func (g *GoGit) Fetch(ctx context.Context, req FetchRequest) (*Snapshot, error) {
	if err := CheckCloneURL(req.URL); err != nil {
		return nil, err
	}
	if req.Ref != "" && req.Constraint != "" {
		return nil, fmt.Errorf("fetch %s: %w: give either a ref or a version constraint, not both", req.URL, ErrUnsupportedSource)
	}
	if req.CacheDir == "" {
		req.CacheDir = filepath.Join(os.TempDir(), "agent-git-cache")
	}
	if p, ok := localPath(req.URL); ok {
		return g.fetchLocal(p, req)
	}
	return g.fetchRemote(ctx, req)
}

func (g *GoGit) debug(msg string, kv ...any) {
	if g.Debug != nil {
		g.Debug(msg, kv...)
	}
}

// localPath is the directory of a file:// URL or an absolute path.
func localPath(raw string) (string, bool) {
	if strings.HasPrefix(raw, "/") {
		return raw, true
	}
	if m := schemeRE.FindStringSubmatch(raw); m != nil && strings.EqualFold(m[1], "file") {
		u, err := url.Parse(raw)
		if err != nil || u.Path == "" {
			return "", false
		}
		return u.Path, true
	}
	return "", false
}

// fetchLocal opens a local repository, bare or not, and reads the commit
// in place.
func (g *GoGit) fetchLocal(p string, req FetchRequest) (*Snapshot, error) {
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("fetch %s: %w: %s does not exist or is not a git repository; check the path", req.URL, ErrRepoNotFound, p)
	}
	gitDir, worktree := p, ""
	if gi, err := os.Stat(filepath.Join(p, ".git")); err == nil && gi.IsDir() {
		gitDir, worktree = filepath.Join(p, ".git"), p
	} else if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
		// A skill folder being written, not yet committed: add installs
		// a commit, link uses a folder as it is.
		return nil, fmt.Errorf("fetch %s: %w: %s is a folder but not a git repository; add installs a commit, so run 'git init && git add -A && git commit -m init' in it first, or use it in place with 'agent skill link %s'", req.URL, ErrRepoNotFound, p, p)
	}
	st := newStorage(gitDir, true)
	st.loose = filepath.Join(gitDir, "objects")
	repo, err := git.Open(st, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, classifyGitError(req.URL, err))
	}
	refs, err := localRefs(repo)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, err)
	}
	t, err := resolveIn(refs, req, func(h plumbing.Hash) bool { _, err := repo.CommitObject(h); return err == nil },
		func(short string) (plumbing.Hash, bool) {
			h, err := repo.ResolveRevision(plumbing.Revision(short))
			if err != nil {
				return plumbing.ZeroHash, false
			}
			if _, err := repo.CommitObject(*h); err != nil {
				return plumbing.ZeroHash, false
			}
			return *h, true
		})
	if err != nil {
		return nil, err
	}
	snap, err := snapshotOf(repo, t, req.URL)
	if err == nil {
		snap.Fetched = FetchedLocal
		if t.Kind == "default" {
			snap.worktree, snap.local = worktree, &localTree{}
		}
	}
	return snap, err
}

// localRefs lists a local repository's refs the way a server advertises
// them: HEAD, branches and tags, annotated tags peeled into name^{}.
func localRefs(repo *git.Repository) ([]*plumbing.Reference, error) {
	var out []*plumbing.Reference
	if h, err := repo.Storer.Reference(plumbing.HEAD); err == nil {
		out = append(out, h)
	}
	iter, err := repo.References()
	if err != nil {
		return nil, fmt.Errorf("list refs: %w", err)
	}
	err = iter.ForEach(func(r *plumbing.Reference) error {
		n := r.Name()
		if r.Type() != plumbing.HashReference || !(n.IsBranch() || n.IsTag()) {
			return nil
		}
		out = append(out, r)
		if n.IsTag() {
			if tag, err := repo.TagObject(r.Hash()); err == nil {
				if h, ok := peel(repo, tag.Hash); ok {
					out = append(out, plumbing.NewHashReference(plumbing.ReferenceName(n.String()+"^{}"), h))
				}
			}
		}
		return nil
	})
	return out, err
}

// resolved is a target plus the advertised ref that holds it ("" when no
// ref does).
type resolved struct {
	target
	RefName plumbing.ReferenceName
}

// resolveIn resolves req against advertised refs. has reports whether a
// commit is available without fetching (nil: never); expand resolves a
// short SHA (nil: not possible before a full fetch).
func resolveIn(refs []*plumbing.Reference, req FetchRequest, has func(plumbing.Hash) bool, expand func(string) (plumbing.Hash, bool)) (resolved, error) {
	byName := make(map[plumbing.ReferenceName]*plumbing.Reference, len(refs))
	for _, r := range refs {
		byName[r.Name()] = r
	}
	// peeled is the commit a tag ref names: its ^{} entry when annotated.
	peeled := func(n plumbing.ReferenceName) (plumbing.Hash, bool) {
		if p, ok := byName[n+"^{}"]; ok {
			return p.Hash(), true
		}
		r, ok := byName[n]
		if !ok || r.Type() != plumbing.HashReference {
			return plumbing.ZeroHash, false
		}
		return r.Hash(), true
	}
	// annotated is the tag object a tag ref names, when it is one.
	annotated := func(n plumbing.ReferenceName) plumbing.Hash {
		if _, ok := byName[n+"^{}"]; ok {
			return byName[n].Hash()
		}
		return plumbing.ZeroHash
	}
	if req.Constraint != "" {
		r, err := resolveConstraintIn(byName, peeled, req.Constraint)
		if err == nil {
			r.Tag = annotated(r.RefName)
		}
		return r, err
	}
	ref := req.Ref
	if ref == "" {
		head, ok := byName[plumbing.HEAD]
		if !ok {
			return resolved{}, fmt.Errorf("resolve default branch: %w: the repository has no default branch; name a branch or tag with @ref", ErrRefNotFound)
		}
		if head.Type() == plumbing.SymbolicReference {
			br, ok := byName[head.Target()]
			if !ok {
				if len(refs) == 1 {
					return resolved{}, fmt.Errorf("%w: %s is an empty repository; push a commit with a SKILL.md first", ErrNoSkill, req.URL)
				}
				return resolved{}, fmt.Errorf("resolve default branch: %w: HEAD names %s, which does not exist; name a branch or tag with @ref", ErrRefNotFound, head.Target().Short())
			}
			return resolved{target: target{Hash: br.Hash(), Kind: "default"}, RefName: br.Name()}, nil
		}
		return resolved{target: target{Hash: head.Hash(), Kind: "default"}, RefName: plumbing.HEAD}, nil
	}
	if r, ok := byName[plumbing.NewBranchReferenceName(ref)]; ok && r.Type() == plumbing.HashReference {
		return resolved{target: target{Hash: r.Hash(), Kind: "branch", Ref: ref}, RefName: r.Name()}, nil
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
		n := plumbing.NewTagReferenceName(name)
		if h, ok := peeled(n); ok {
			t := target{Hash: h, Kind: "tag", Ref: name, Tag: annotated(n)}
			if v, err := semver.NewVersion(name); err == nil {
				t.Version = v.String()
			}
			return resolved{target: t, RefName: n}, nil
		}
	}
	if len(ref) >= 4 && len(ref) <= 40 && IsHex(ref) {
		if len(ref) == 40 {
			h := plumbing.NewHash(ref)
			t := target{Hash: h, Kind: "commit", Ref: ref}
			for _, r := range refs {
				if r.Type() == plumbing.HashReference && r.Hash() == h && (r.Name().IsBranch() || r.Name().IsTag() || r.Name() == plumbing.HEAD) {
					return resolved{target: t, RefName: r.Name()}, nil
				}
			}
			if has == nil || has(h) {
				return resolved{target: t}, nil
			}
		} else if expand != nil {
			if h, ok := expand(ref); ok {
				return resolved{target: target{Hash: h, Kind: "commit", Ref: ref}}, nil
			}
		} else {
			return resolved{target: target{Kind: "commit", Ref: ref}}, nil // needs a full fetch
		}
	}
	return resolved{}, fmt.Errorf("resolve %q: %w: no branch, tag or commit named %q; available: %s", ref, ErrRefNotFound, ref, advertisedList(refs))
}

func resolveConstraintIn(byName map[plumbing.ReferenceName]*plumbing.Reference, peeled func(plumbing.ReferenceName) (plumbing.Hash, bool), constraint string) (resolved, error) {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return resolved{}, fmt.Errorf("resolve %q: %w: not a version constraint: %v", constraint, ErrNoMatchingVersion, err)
	}
	type vt struct {
		name plumbing.ReferenceName
		v    *semver.Version
		h    plumbing.Hash
	}
	var tags []vt
	for n := range byName {
		if !n.IsTag() || strings.HasSuffix(n.String(), "^{}") {
			continue
		}
		v, err := semver.NewVersion(n.Short())
		if err != nil {
			continue
		}
		if h, ok := peeled(n); ok {
			tags = append(tags, vt{n, v, h})
		}
	}
	sort.Slice(tags, func(i, j int) bool {
		if !tags[i].v.Equal(tags[j].v) {
			return tags[i].v.GreaterThan(tags[j].v)
		}
		return tags[i].name < tags[j].name
	})
	for _, t := range tags {
		if c.Check(t.v) {
			return resolved{target: target{Hash: t.h, Kind: "tag", Ref: t.name.Short(), Version: t.v.String()}, RefName: t.name}, nil
		}
	}
	if len(tags) == 0 {
		return resolved{}, fmt.Errorf("resolve %q: %w: %w (like v1.2.0) in the repository; install a branch or commit with @ref instead", constraint, ErrNoMatchingVersion, ErrNoTags)
	}
	var avail []string
	for _, t := range tags {
		avail = append(avail, t.v.String())
	}
	if len(avail) > 20 {
		avail = append(avail[:20], "…")
	}
	return resolved{}, fmt.Errorf("resolve %q: %w: no tag matches %s; available versions: %s", constraint, ErrNoMatchingVersion, constraint, strings.Join(avail, ", "))
}

// advertisedList names a few branches and tags, for "not found" messages.
func advertisedList(refs []*plumbing.Reference) string {
	var names []string
	for _, r := range refs {
		n := r.Name()
		if (n.IsBranch() || n.IsTag()) && !strings.HasSuffix(n.String(), "^{}") {
			names = append(names, n.Short())
		}
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

func snapshotOf(repo *git.Repository, t resolved, u string) (*Snapshot, error) {
	c, err := repo.CommitObject(t.Hash)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: commit %s: %w", u, Short(t.Hash.String()), err)
	}
	tree, err := memoTree(repo, c)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: tree of %s: %w", u, Short(t.Hash.String()), err)
	}
	return &Snapshot{Commit: t.Hash.String(), Kind: t.Kind, Ref: t.Ref, Version: t.Version, FS: NewTreeFS(tree), repo: repo, tag: t.Tag}, nil
}

// fetched sets how a snapshot's objects came and the cache they are in,
// when there is a snapshot.
func fetched(s *Snapshot, err error) func(how string, cache *cacheOf) (*Snapshot, error) {
	return func(how string, cache *cacheOf) (*Snapshot, error) {
		if s != nil {
			s.Fetched, s.cache = how, cache
		}
		return s, err
	}
}

// withRetry runs op up to Tries times while it fails with ErrUnreachable.
func (g *GoGit) withRetry(ctx context.Context, u string, op func() error) error {
	tries, backoff, sleep := g.Tries, g.Backoff, g.Sleep
	if tries <= 0 {
		tries = 3
	}
	if backoff <= 0 {
		backoff = defaultBackoff
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	var err error
	for try := 1; ; try++ {
		err = classifyGitError(u, op())
		if err == nil {
			return nil
		}
		if !errors.Is(err, ErrUnreachable) || try >= tries || ctx.Err() != nil {
			break
		}
		if serr := sleep(ctx, backoff); serr != nil {
			break
		}
		backoff *= 2
	}
	if errors.Is(err, ErrUnreachable) {
		return fmt.Errorf("fetch %s (%d tries): %w", u, tries, err)
	}
	return fmt.Errorf("fetch %s: %w", u, err)
}

// fetchRemote lists the remote's refs, resolves the request, and fetches
// that commit into the cache.
func (g *GoGit) fetchRemote(ctx context.Context, req FetchRequest) (*Snapshot, error) {
	useOwnTransports()
	var (
		refs []*plumbing.Reference
		sess transport.UploadPackSession
		adv  *packp.AdvRefs
	)
	err := g.withRetry(ctx, req.URL, func() error {
		var err error
		refs, sess, adv, err = lsRemote(ctx, req.URL)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The listing's session serves the partial fetch's first request;
	// otherwise it is closed unused.
	closeSess := sync.OnceFunc(func() { _ = sess.Close() })
	defer closeSess()
	if len(refs) == 0 {
		return nil, fmt.Errorf("%w: %s is an empty repository; push a commit with a SKILL.md first", ErrNoSkill, req.URL)
	}
	t, err := resolveIn(refs, req, nil, nil)
	if err != nil {
		return nil, err
	}
	if req.Skills != nil && t.Hash != plumbing.ZeroHash {
		snap, err := g.fetchPartial(ctx, req, t, sess, adv)
		if !errors.Is(err, errNoPartial) {
			if err == nil {
				g.debug("fetch: partial (filter blob:none, then blobs by id)", "url", req.URL, "commit", t.Hash.String(), "path", snap.Fetched)
			}
			return snap, err
		}
		g.debug("fetch: the server serves no partial fetch (uploadpack.allowFilter and allowAnySHA1InWant); fetching at depth 1", "url", req.URL, "reason", err.Error())
	}
	closeSess()
	unlock, repo, fresh, err := g.openCache(req.CacheDir, req.URL, "")
	if err != nil {
		return nil, err
	}
	defer unlock()
	if t.Hash != plumbing.ZeroHash && hasCommitTree(repo, t.Hash) && hasTag(repo, t) {
		g.debug("fetch: commit already in the cache", "url", req.URL, "commit", t.Hash.String())
		return fetched(snapshotOf(repo, t, req.URL))(FetchedCache, &cacheOf{req.CacheDir, req.URL, ""})
	}
	if t.Hash != plumbing.ZeroHash {
		spec := config.RefSpec("+" + t.Hash.String() + ":" + cacheRef(t.Hash))
		if t.RefName != "" {
			spec = config.RefSpec("+" + t.RefName.String() + ":" + cacheRef(t.Hash))
		}
		err := g.withRetry(ctx, req.URL, func() error {
			return g.fetchInto(ctx, repo, req, spec, depthFor(repo))
		})
		switch {
		case err == nil:
			if got, ok := movedTo(repo, t); ok {
				t.Hash = got
			}
			if hasCommitTree(repo, t.Hash) {
				g.debug("fetch: depth 1", "url", req.URL, "commit", t.Hash.String(), "path", FetchedDepth)
				return fetched(snapshotOf(repo, t, req.URL))(FetchedDepth, &cacheOf{req.CacheDir, req.URL, ""})
			}
			g.debug("fetch: the shallow fetch did not bring the commit; fetching the full history", "url", req.URL, "commit", t.Hash.String())
		case errors.Is(err, git.ErrExactSHA1NotSupported):
			g.debug("fetch: the server does not serve commits by SHA; fetching the full history", "url", req.URL, "commit", t.Hash.String())
		case errors.Is(err, ErrUnreachable), errors.Is(err, ErrAuthRequired), errors.Is(err, ErrRepoNotFound), errors.Is(err, ErrTooLarge), ctx.Err() != nil:
			if fresh {
				g.dropCache(repo, req.CacheDir, req.URL, "")
			}
			return nil, err
		default:
			g.debug("fetch: shallow fetch failed; fetching the full history", "url", req.URL, "error", err.Error())
		}
	} else {
		g.debug("fetch: a short SHA needs the full history", "url", req.URL, "ref", req.Ref)
	}
	if fresh {
		g.dropCache(repo, req.CacheDir, req.URL, "")
	} else {
		closeStore(repo) // the full fetch has its own cache
	}
	unlock()
	return g.fetchFull(ctx, req, t)
}

// fetchFull is the fallback: every branch and tag with full history, in a
// cache of its own (a shallow cache cannot be deepened reliably).
func (g *GoGit) fetchFull(ctx context.Context, req FetchRequest, t resolved) (*Snapshot, error) {
	unlock, repo, fresh, err := g.openCache(req.CacheDir, req.URL, "full")
	if err != nil {
		return nil, err
	}
	defer unlock()
	err = g.withRetry(ctx, req.URL, func() error {
		err := g.fetchInto(ctx, repo, req, "+refs/heads/*:refs/heads/*", 0, "+refs/tags/*:refs/tags/*")
		if errors.Is(err, git.NoErrAlreadyUpToDate) {
			return nil
		}
		return err
	})
	if err != nil {
		if fresh {
			g.dropCache(repo, req.CacheDir, req.URL, "full")
		}
		return nil, err
	}
	if t.Hash == plumbing.ZeroHash {
		if h, err := repo.ResolveRevision(plumbing.Revision(t.Ref)); err == nil {
			t.Hash = *h
		}
	}
	if _, err := repo.CommitObject(t.Hash); t.Hash == plumbing.ZeroHash || err != nil {
		refs, _ := localRefs(repo)
		if fresh {
			g.dropCache(repo, req.CacheDir, req.URL, "full")
		}
		return nil, fmt.Errorf("resolve %q: %w: no branch, tag or commit named %q in %s; available: %s", t.Ref, ErrRefNotFound, t.Ref, req.URL, advertisedList(refs))
	}
	return fetched(snapshotOf(repo, t, req.URL))(FetchedFull, &cacheOf{req.CacheDir, req.URL, "full"})
}

// fetchInto fetches refspecs into the cache repository at depth (0: all).
func (g *GoGit) fetchInto(ctx context.Context, repo *git.Repository, req FetchRequest, spec config.RefSpec, depth int, more ...config.RefSpec) error {
	max := req.MaxFile
	if max <= 0 {
		max = DefaultFileLimit
	}
	st := sizeCheckedStorer{Storer: repo.Storer, max: max}
	remote := git.NewRemote(st, &config.RemoteConfig{Name: "origin", URLs: []string{req.URL}})
	opts := &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   append([]config.RefSpec{spec}, more...),
		Depth:      depth,
		Tags:       git.NoTags,
		Force:      true,
	}
	if req.Progress != nil {
		opts.Progress = req.Progress
	}
	err := remote.FetchContext(ctx, opts)
	if errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil
	}
	return err
}

// cacheRef keeps a fetched commit reachable in the cache, and tells the
// server on the next fetch what the cache already has.
func cacheRef(h plumbing.Hash) string { return "refs/fetched/" + h.String() }

// movedTo is the commit a branch was fetched at when it moved between the
// listing and the fetch.
func movedTo(repo *git.Repository, t resolved) (plumbing.Hash, bool) {
	if t.Kind != "branch" && t.Kind != "default" {
		return plumbing.ZeroHash, false
	}
	if hasCommitTree(repo, t.Hash) {
		return plumbing.ZeroHash, false
	}
	r, err := repo.Reference(plumbing.ReferenceName(cacheRef(t.Hash)), false)
	if err != nil || r.Hash() == t.Hash {
		return plumbing.ZeroHash, false
	}
	return r.Hash(), true
}

// hasTag reports whether the annotated tag object t names, if any, is in
// repo: a commit cached by another ref lacks it, and its signature is
// checked.
func hasTag(repo *git.Repository, t resolved) bool {
	if t.Tag.IsZero() {
		return true
	}
	_, err := repo.TagObject(t.Tag)
	return err == nil
}

func hasCommitTree(repo *git.Repository, h plumbing.Hash) bool {
	c, err := repo.CommitObject(h)
	if err != nil {
		return false
	}
	_, err = repo.TreeObject(c.TreeHash)
	return err == nil
}

// cachePath is where url's objects are kept: the sha256 of the URL, so
// that no URL can name a path.
func cachePath(cacheDir, u, kind string) string {
	sum := sha256.Sum256([]byte(u))
	name := hex.EncodeToString(sum[:16])
	if kind != "" {
		name += "." + kind
	}
	return filepath.Join(cacheDir, name)
}

// openCache opens (creating it if needed) the bare cache repository of u
// under an exclusive flock, so that two processes never write one cache at
// once. Readers need no lock: a fetch only adds objects, and nothing here
// ever deletes one from a cache in use.
func (g *GoGit) openCache(cacheDir, u, kind string) (unlock func(), repo *git.Repository, fresh bool, err error) {
	dir := cachePath(cacheDir, u, kind)
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, nil, false, fmt.Errorf("fetch %s: cache: %w", u, err)
	}
	lockFile, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, false, fmt.Errorf("fetch %s: cache: %w", u, err)
	}
	if err := flock.Lock(lockFile); err != nil {
		lockFile.Close()
		return nil, nil, false, fmt.Errorf("fetch %s: cache lock: %w", u, err)
	}
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			_ = flock.Unlock(lockFile)
			lockFile.Close()
		})
	}
	st := newStorage(dir, true)
	repo, err = git.Open(st, nil)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		fresh = true
		repo, err = git.Init(st, nil)
	}
	if err != nil {
		// A cache a killed fetch left unreadable is rebuilt, never trusted.
		g.debug("fetch: cache unreadable; starting it again", "dir", dir, "error", err.Error())
		_ = os.RemoveAll(dir)
		st = newStorage(dir, true)
		fresh = true
		repo, err = git.Init(st, nil)
	}
	if err != nil {
		unlock()
		return nil, nil, false, fmt.Errorf("fetch %s: cache: %w", u, err)
	}
	return unlock, repo, fresh, nil
}

// dropCache removes a cache that a failed first fetch created, so that a
// failed add leaves nothing behind.
func (g *GoGit) dropCache(repo *git.Repository, cacheDir, u, kind string) {
	closeStore(repo)
	p := cachePath(cacheDir, u, kind)
	_ = os.RemoveAll(p)
	// The lock file stays: another process may be waiting on it.
}

// CheckoutSkill writes the skill folder dir of snap under repoDir, in place
// of the manifests writeManifests put there. A plugin built from a Go
// module whose go.mod lies above the skill needs the rest of that module,
// so then the whole tree is written. lim bounds what is written.
func CheckoutSkill(snap *Snapshot, dir, repoDir string, m *manifest.Manifest, lim Limits) error {
	if NeedsWholeTree(snap, dir, m) {
		if err := os.RemoveAll(repoDir); err != nil {
			return err
		}
		return WriteTree(snap.FS, ".", repoDir, lim)
	}
	out := filepath.Join(repoDir, filepath.FromSlash(dir))
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	return WriteTree(snap.FS, dir, out, lim)
}

// NeedsWholeTree reports whether CheckoutSkill writes the whole tree for
// the skill folder dir: its plugin is built from a Go module whose go.mod
// lies above dir.
func NeedsWholeTree(snap *Snapshot, dir string, m *manifest.Manifest) bool {
	return m != nil && m.Plugin != nil && m.Plugin.Build != "" && moduleOutside(snap.FS, dir, m.Plugin.Build)
}

// moduleOutside reports whether the Go module of the package build (a
// path inside the skill folder dir) has its go.mod above dir.
func moduleOutside(fsys fs.FS, dir, build string) bool {
	p := path.Clean(path.Join(FSPath(dir), build))
	for {
		if _, err := fs.Stat(fsys, path.Join(p, "go.mod")); err == nil {
			return !(dir == "" || p == dir || strings.HasPrefix(p, dir+"/"))
		}
		if p == "." || p == "/" || p == "" {
			return false
		}
		p = path.Dir(p)
	}
}

// FSPath is a repository folder as an io/fs name ("" is the root, ".").
func FSPath(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// depthFor is 1 for a cache that holds no commit yet. A cache that holds
// one fetches without a depth limit: the server then sends only what the
// cached commits lack (an update sends one commit's new objects), whereas
// git http-backend answers a go-git "deepen 1" next to a have with the
// whole tree again (go-git speaks protocol v0 without multi_ack).
func depthFor(repo *git.Repository) int {
	if s, err := repo.Storer.Shallow(); err == nil && len(s) > 0 {
		return 0
	}
	return 1
}
