package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/signing"
)

// fetchRequest is a FetchRequest for a recorded url with the store's
// object cache.
func (s *Pipeline) fetchRequest(url, ref, constraint string, progress io.Writer) gitsrc.FetchRequest {
	src := gitsrc.Recorded(url)
	src.Ref, src.Constraint = ref, constraint
	return s.request(src, progress)
}

// request is the FetchRequest for a parsed source, with the store's
// object cache: the source is not parsed again.
func (s *Pipeline) request(src gitsrc.Source, progress io.Writer) gitsrc.FetchRequest {
	return FetchRequest(s.Store, src, progress)
}

// FetchRequest is the FetchRequest for a parsed source with s's object
// cache and file limit: the source is not parsed again.
func FetchRequest(s *Store, src gitsrc.Source, progress io.Writer) gitsrc.FetchRequest {
	req := src.Request()
	req.Progress, req.CacheDir, req.MaxFile = progress, filepath.Join(s.Home, "cache", "git"), s.Limits.File
	return req
}

// fetchPinned fetches exactly the commit e records (sync, rollback)
// and checks that the server handed over that commit, not whatever a ref
// of that name points to now.
//
// Under a signer policy, a pin that records the tag it came from is
// fetched through that tag first: teams sign release tags more often than
// commits, and a fetch by SHA sees only the commit's signature. The tag
// counts only while it still names the pinned commit.
func (s *Pipeline) fetchPinned(ctx context.Context, e Entry, progress io.Writer) (*gitsrc.Snapshot, error) {
	if e.Ref != "" && e.Ref != e.CommitSHA && !s.Signatures.Empty() {
		req := s.fetchRequest(e.URL, e.Ref, "", progress)
		req.Path = e.Subdir
		snap, err := s.git().Fetch(ctx, req)
		if err == nil && snap.Kind == "tag" && snap.Commit == e.CommitSHA {
			return snap, nil
		}
		// A relabelled release is refused, not fetched again by SHA
		// where the relabel would go unseen.
		if errors.Is(err, signing.ErrRelabelled) {
			return nil, err
		}
	}
	req := s.fetchRequest(e.URL, e.CommitSHA, "", progress)
	req.Path = e.Subdir
	snap, err := s.git().Fetch(ctx, req)
	if errors.Is(err, gitsrc.ErrRefNotFound) {
		return nil, fmt.Errorf("%w: commit %s is no longer in %s (history rewritten, or never pushed); it is not replaced by what a tag or branch holds now: pin a commit the server has (agent skill add, then agent skill lock)", gitsrc.ErrRefNotFound, gitsrc.Short(e.CommitSHA), e.URL)
	}
	if err != nil {
		return nil, err
	}
	if snap.Commit != e.CommitSHA {
		return nil, fmt.Errorf("fetch %s at %s: %w: got commit %s instead", e.URL, gitsrc.Short(e.CommitSHA), ErrCommitMismatch, gitsrc.Short(snap.Commit))
	}
	return snap, nil
}
