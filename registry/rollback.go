package registry

import (
	"context"
	"fmt"
	"io"

	"github.com/agentskills/agent/registry/gitsrc"
)

// RollbackRequest is what `agent skill rollback` asks for.
type RollbackRequest struct {
	Name         string
	AgentVersion string
	Progress     io.Writer // nil is silent
	Warn         func(msg string)
}

// Rollback returns a skill to its previous_sha: the commit is fetched by
// SHA, its folder must hash to the recorded previous h1: hash, the plugin
// is rebuilt (for a trusted skill) and the folder swapped in atomically, as
// update does. The commit it leaves becomes the new previous_sha, so a
// second rollback returns to where the first started.
func (s *Pipeline) Rollback(ctx context.Context, req RollbackRequest, prep Prepare) (UpdatePlan, error) {
	p, err := s.rollback(ctx, req, prep)
	if err != nil {
		return p, fmt.Errorf("rollback %s: %w", req.Name, err)
	}
	return p, nil
}

func (s *Pipeline) rollback(ctx context.Context, req RollbackRequest, prep Prepare) (UpdatePlan, error) {
	e, err := s.Get(req.Name)
	if err != nil {
		return UpdatePlan{}, err
	}
	plan := UpdatePlan{Name: e.Canonical, OldSHA: e.CommitSHA, NewSHA: e.PreviousSHA, OldVersion: e.Version}
	if e.Source == SourceDev {
		return plan, fmt.Errorf("%w: %s is used in place from %s; roll back its folder with your own version control", ErrLinked, e.Canonical, e.Path)
	}
	if !e.fetched() || e.PreviousSHA == "" {
		return plan, fmt.Errorf("%w: %s has not been updated since it was installed (agent skill update moves it; agent skill info shows its commit)", ErrNoPrevious, e.Canonical)
	}
	if e.PreviousSHA == e.CommitSHA {
		return plan, fmt.Errorf("%w: %s records its current commit %s as the previous one", ErrNoPrevious, e.Canonical, gitsrc.Short(e.CommitSHA))
	}
	// An entry written before previous_dir_hash was recorded has none:
	// the fetched commit is still checked to be previous_sha.
	le := LockEntry{Name: e.Canonical, Source: e.URL, Path: e.Subdir, Ref: e.Ref, Constraint: e.Constraint, Commit: e.PreviousSHA, Hash: e.PreviousDirHash}
	_, err = s.installLocked(ctx, le, &e, func(string) bool { return e.Trusted }, SyncRequest{AgentVersion: req.AgentVersion, Progress: req.Progress, Warn: req.Warn}, prep)
	if err != nil {
		return plan, err
	}
	if ne, err := s.Get(e.Canonical); err == nil {
		plan.NewVersion = ne.Version
	}
	return plan, nil
}
