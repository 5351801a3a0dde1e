package gitsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"

	"github.com/agentskills/agent/internal/ground/flock"
	"github.com/agentskills/agent/registry/manifest"
)

// How a snapshot's objects came (Snapshot.Fetched).
const (
	// FetchedFilter: the commit and its trees (filter blob:none), then
	// only the blobs the skills need, by id.
	FetchedFilter = "filter"
	// FetchedDepth: the commit with every blob of its tree (depth 1).
	FetchedDepth = "depth"
	// FetchedFull: every branch and tag with their history.
	FetchedFull = "full"
	// FetchedCache: nothing; the cache already held the commit.
	FetchedCache = "cache"
	// FetchedLocal: a local repository, read in place.
	FetchedLocal = "local"
)

// AllSkills, as FetchRequest.Skills, names every folder that holds a
// SKILL.md.
const AllSkills = "*"

// blobless is the cache kind of partial fetches. It is kept apart from
// the depth-1 cache: a later depth-1 fetch names the cached commits as
// haves, and the server would then leave out blobs the blobless cache
// never received.
const blobless = "blobless"

// errNoPartial asks fetchRemote for the depth-1 fetch: the server cannot
// filter or will not hand out blobs by id.
var errNoPartial = errors.New("the server cannot serve a partial fetch")

// partialCapable reports whether a protocol v0/v1 server serves a
// blob:none fetch and then blobs by id: go-git speaks no protocol v2, so
// a want of a blob needs allow-reachable-sha1-in-want (a server with
// uploadpack.allowAnySHA1InWant advertises it too).
func partialCapable(caps *capability.List) bool {
	return caps.Supports(capability.Filter) && caps.Supports(capability.Shallow) &&
		caps.Supports(capability.AllowReachableSHA1InWant)
}

// openUploadPack opens an upload-pack session with go-git's transport
// for the URL's scheme (the ones useOwnTransports installed).
func openUploadPack(u string) (transport.UploadPackSession, error) {
	ep, err := transport.NewEndpoint(u)
	if err != nil {
		return nil, err
	}
	c, err := client.NewClient(ep)
	if err != nil {
		return nil, err
	}
	return c.NewUploadPackSession(ep, nil)
}

// lsRemote lists the remote's refs the way Remote.List does with
// AppendPeeled, and returns the session still open with its capabilities,
// so that the first upload-pack request of a git:// fetch needs no second
// connection. The caller closes the session.
func lsRemote(ctx context.Context, u string) ([]*plumbing.Reference, transport.UploadPackSession, *packp.AdvRefs, error) {
	s, err := openUploadPack(u)
	if err != nil {
		return nil, nil, nil, err
	}
	ar, err := s.AdvertisedReferencesContext(ctx)
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	all, err := ar.AllReferences()
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	var refs []*plumbing.Reference
	iter, err := all.IterReferences()
	if err == nil {
		err = iter.ForEach(func(r *plumbing.Reference) error { refs = append(refs, r); return nil })
	}
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	for k, v := range ar.Peeled {
		refs = append(refs, plumbing.NewReferenceFromStrings(k+"^{}", v.String()))
	}
	return refs, s, ar, nil
}

// partialSource is what a partial snapshot needs to fetch more blobs.
type partialSource struct {
	g   *GoGit
	req FetchRequest
}

// fetchPartial fetches t's commit and trees with filter blob:none over s
// (a session whose refs were listed), then the blobs req.Skills needs, into
// the blobless cache. It returns errNoPartial when the server cannot do
// either; the caller then fetches at depth 1.
func (g *GoGit) fetchPartial(ctx context.Context, req FetchRequest, t resolved, s transport.UploadPackSession, ar *packp.AdvRefs) (*Snapshot, error) {
	unlock, repo, fresh, err := g.openCache(req.CacheDir, req.URL, blobless)
	if err != nil {
		return nil, err
	}
	defer unlock()
	fail := func(err error) (*Snapshot, error) {
		if fresh {
			g.dropCache(repo, req.CacheDir, req.URL, blobless)
		}
		return nil, err
	}
	how := FetchedCache
	if !hasCommitTree(repo, t.Hash) || !hasTag(repo, t) {
		if !partialCapable(ar.Capabilities) {
			return fail(errNoPartial)
		}
		wants := []plumbing.Hash{t.Hash}
		if !t.Tag.IsZero() {
			wants = append(wants, t.Tag)
		}
		if err := g.request(ctx, repo, req, s, ar, wants, true); err != nil {
			return fail(err)
		}
		if err := repo.Storer.SetReference(plumbing.NewHashReference(plumbing.ReferenceName(cacheRef(t.Hash)), t.Hash)); err != nil {
			return fail(err)
		}
		if !hasCommitTree(repo, t.Hash) || !hasTag(repo, t) {
			return fail(fmt.Errorf("fetch %s: %w: the commit %s or its trees", req.URL, ErrWithheld, Short(t.Hash.String())))
		}
		how = FetchedFilter
	}
	snap, err := snapshotOf(repo, t, req.URL)
	if err != nil {
		return fail(err)
	}
	snap.Fetched = how
	snap.partial = &partialSource{g: g, req: req}
	snap.cache = &cacheOf{req.CacheDir, req.URL, blobless}
	missing, err := neededBlobs(repo, t.Hash, req.Skills)
	if err != nil {
		return fail(fmt.Errorf("fetch %s: %w", req.URL, err))
	}
	if len(missing) > 0 {
		// Smart HTTP is stateless: the listing's session serves a second
		// request without listing the refs again. git:// and ssh end a
		// session with its one pack.
		var again transport.UploadPackSession
		if scheme := strings.ToLower(strings.SplitN(req.URL, ":", 2)[0]); scheme == "http" || scheme == "https" {
			again = s
		}
		if err := g.fetchBlobs(ctx, repo, req, missing, again, ar); err != nil {
			return fail(err)
		}
		snap.Fetched = FetchedFilter
	}
	return snap, nil
}

// Need makes sure the files under dirs (slash paths in the snapshot; ""
// or "." is the whole tree) can be read: a snapshot of a partial fetch
// holds only the blobs of the folders FetchRequest.Skills named, and this
// fetches the rest of dirs' blobs in one request. On other snapshots it
// does nothing.
func (s *Snapshot) Need(ctx context.Context, dirs ...string) error {
	if s == nil || s.partial == nil || len(dirs) == 0 {
		return nil
	}
	p := s.partial
	var missing []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	for _, dir := range dirs {
		files, err := treeFiles(s.repo, plumbing.NewHash(s.Commit), dirOf(dir))
		if err != nil {
			return fmt.Errorf("fetch %s: files of %s: %w", p.req.URL, FSPath(dir), err)
		}
		for _, h := range files {
			if !seen[h] && s.repo.Storer.HasEncodedObject(h) != nil {
				seen[h] = true
				missing = append(missing, h)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	unlock, err := p.g.lockCache(p.req.CacheDir, p.req.URL, blobless)
	if err != nil {
		return err
	}
	defer unlock()
	return p.g.fetchBlobs(ctx, s.repo, p.req, missing, nil, nil)
}

func dirOf(dir string) string {
	if dir == "." {
		return ""
	}
	return dir
}

// fetchBlobs fetches blobs by id, in one request on a new session, and
// checks that the server sent every one: a server that advertised the
// partial fetch and then left one out gives ErrWithheld. A server that
// refuses the wants gives errNoPartial. s and ar, when given, are a
// session to send the request on (else a new one).
func (g *GoGit) fetchBlobs(ctx context.Context, repo *git.Repository, req FetchRequest, blobs []plumbing.Hash, s transport.UploadPackSession, ar *packp.AdvRefs) error {
	g.debug("fetch: blobs by id", "url", req.URL, "blobs", len(blobs))
	err := g.request(ctx, repo, req, s, ar, blobs, false)
	switch {
	case err == nil, errors.Is(err, transport.ErrEmptyUploadPackRequest), errors.Is(err, packfile.ErrEmptyPackfile):
		// What came is checked below.
	case errors.Is(err, errNoPartial), errors.Is(err, ErrTooLarge), errors.Is(err, ErrUnreachable),
		errors.Is(err, ErrAuthRequired), errors.Is(err, ErrRepoNotFound), ctx.Err() != nil:
		return err
	default:
		// upload-pack answers a want it will not serve with an error
		// line ("not our ref") before any pack.
		return fmt.Errorf("%w: blobs by id: %w", errNoPartial, err)
	}
	var lost []string
	for _, h := range blobs {
		if repo.Storer.HasEncodedObject(h) != nil {
			lost = append(lost, h.String())
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		return fmt.Errorf("fetch %s: %w: asked for %d files of the skill by id, %d did not come (%s); the server advertises partial clone (filter) but does not serve it; try again, or ask its admin to check uploadpack.allowFilter", req.URL, ErrWithheld, len(blobs), len(lost), Short(lost[0]))
	}
	return nil
}

// request sends one upload-pack request with wants (uploadPack) and
// retries it after a network failure, as withRetry does: on s, when
// given, the first time (its refs already listed), else and then on a new
// session each time.
func (g *GoGit) request(ctx context.Context, repo *git.Repository, req FetchRequest, s transport.UploadPackSession, ar *packp.AdvRefs, wants []plumbing.Hash, trees bool) error {
	return g.withRetry(ctx, req.URL, func() error {
		if s == nil {
			fresh, err := openUploadPack(req.URL)
			if err != nil {
				return err
			}
			defer fresh.Close()
			if ar, err = fresh.AdvertisedReferencesContext(ctx); err != nil {
				return err
			}
			s = fresh
		}
		cur, adv := s, ar
		s = nil // a retry starts a new session
		if !partialCapable(adv.Capabilities) {
			return errNoPartial
		}
		return g.uploadPack(ctx, repo, req, cur, adv, wants, trees)
	})
}

// uploadPack sends one upload-pack request on s and stores the pack it
// answers through the pack-size check. With trees, it asks for wants at
// depth 1 without blobs; otherwise for wants alone (blobs by id).
func (g *GoGit) uploadPack(ctx context.Context, repo *git.Repository, req FetchRequest, s transport.UploadPackSession, ar *packp.AdvRefs, wants []plumbing.Hash, trees bool) (err error) {
	up := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
	up.Wants = wants
	if trees {
		if err := up.Capabilities.Set(capability.Shallow); err != nil {
			return err
		}
		if err := up.Capabilities.Set(capability.Filter); err != nil {
			return err
		}
		up.Depth = packp.DepthCommits(1)
		up.Filter = packp.FilterBlobNone()
		if up.Shallows, err = repo.Storer.Shallow(); err != nil {
			return err
		}
	}
	if req.Progress == nil && ar.Capabilities.Supports(capability.NoProgress) {
		if err := up.Capabilities.Set(capability.NoProgress); err != nil {
			return err
		}
	}
	resp, err := s.UploadPack(ctx, up)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := resp.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if trees && len(resp.Shallows) > 0 {
		if err := addShallows(repo, resp.Shallows); err != nil {
			return err
		}
	}
	var r io.Reader = resp
	switch {
	case up.Capabilities.Supports(capability.Sideband64k):
		d := sideband.NewDemuxer(sideband.Sideband64k, resp)
		d.Progress = req.Progress
		r = d
	case up.Capabilities.Supports(capability.Sideband):
		d := sideband.NewDemuxer(sideband.Sideband, resp)
		d.Progress = req.Progress
		r = d
	}
	max := req.MaxFile
	if max <= 0 {
		max = DefaultFileLimit
	}
	return packfile.UpdateObjectStorage(sizeCheckedStorer{Storer: repo.Storer, max: max}, r)
}

// addShallows records the commits a depth-1 answer made shallow.
func addShallows(repo *git.Repository, add []plumbing.Hash) error {
	have, err := repo.Storer.Shallow()
	if err != nil {
		return err
	}
	known := map[plumbing.Hash]bool{}
	for _, h := range have {
		known[h] = true
	}
	for _, h := range add {
		if !known[h] {
			known[h] = true
			have = append(have, h)
		}
	}
	return repo.Storer.SetShallow(have)
}

// neededBlobs lists the blobs of commit h that a partial fetch brings and
// the cache lacks: every file discovery reads (SKILL.md, the
// .claude-plugin manifests), and every file of the folders skills names: a
// folder holding a SKILL.md whose path or base name is one of skills, or
// any such folder for AllSkills.
func neededBlobs(repo *git.Repository, h plumbing.Hash, skills []string) ([]plumbing.Hash, error) {
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, err
	}
	root, err := c.Tree()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	all := false
	for _, s := range skills {
		if s == AllSkills {
			all = true
		}
		want[path.Clean(s)] = true
	}
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	add := func(h plumbing.Hash) {
		if !seen[h] && repo.Storer.HasEncodedObject(h) != nil {
			seen[h] = true
			out = append(out, h)
		}
	}
	// walk visits dir's tree; under is true inside a selected folder.
	var walk func(t *object.Tree, dir string, under bool) error
	walk = func(t *object.Tree, dir string, under bool) error {
		if !under {
			for _, e := range t.Entries {
				if e.Mode.IsFile() && manifest.IsName(e.Name) {
					under = all || want[dir] || want[path.Base(dir)]
					break
				}
			}
		}
		for _, e := range t.Entries {
			switch {
			case e.Mode == filemode.Dir:
				sub, err := t.Tree(e.Name)
				if err != nil {
					return err
				}
				if err := walk(sub, path.Join(dir, e.Name), under); err != nil {
					return err
				}
			case e.Mode == filemode.Submodule:
			case under, manifest.IsName(e.Name),
				path.Base(dir) == ".claude-plugin" && (e.Name == "plugin.json" || e.Name == "marketplace.json"):
				add(e.Hash)
			}
		}
		return nil
	}
	if err := walk(root, ".", false); err != nil {
		return nil, err
	}
	return out, nil
}

// lockCache takes the cache lock of u alone, for adding objects to a
// repository that is already open.
func (g *GoGit) lockCache(cacheDir, u, kind string) (func(), error) {
	lockFile, err := os.OpenFile(cachePath(cacheDir, u, kind)+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: cache: %w", u, err)
	}
	if err := flock.Lock(lockFile); err != nil {
		lockFile.Close()
		return nil, fmt.Errorf("fetch %s: cache lock: %w", u, err)
	}
	return func() { _ = flock.Unlock(lockFile); lockFile.Close() }, nil
}
