package registry

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// maxSurveyedManifest bounds the SKILL.md text a survey keeps per skill:
// a catalog page shows it, an install reads it again.
const maxSurveyedManifest = 256 << 10

// Survey is what one source holds at one commit (or OCI digest), read for
// search and the catalog: nothing is installed or built.
type Survey struct {
	Commit  string // the commit SHA, or the artifact's sha256: digest
	Ref     string // the ref or tag resolved
	Version string // the tag's version, "" when no tag was resolved
	// Signer is the accepted key that signed what was fetched, "" when
	// none did or no signer policy lists keys for the source.
	Signer string
	Skills []gitsrc.Found
	// Manifests holds each skill's SKILL.md text by Found.Dir, at most
	// 256 KiB each (longer ones are left out).
	Manifests map[string]string
}

// Survey fetches src as add --list does (the per-source object cache, the
// signer policy) and returns what discovery finds there with the SKILL.md
// texts. When known reports that the caller has already surveyed the
// commit fetched, discovery is skipped and Skills is nil. look, when not
// nil, is handed each skill's files while the fetched commit is at hand
// (agent skill search audits them); nothing is installed or run.
func (s *Pipeline) Survey(ctx context.Context, src gitsrc.Source, progress io.Writer, known func(commit string) bool, look func(f gitsrc.Found, fsys fs.FS)) (*Survey, error) {
	snap, err := s.git().Fetch(ctx, s.fetchRequest(src.URL, src.Ref, src.Constraint, progress))
	if err != nil {
		return nil, fmt.Errorf("survey %s: %w", src.Raw, err)
	}
	defer snap.Close()
	if known != nil && known(snap.Commit) {
		return &Survey{Commit: snap.Commit, Ref: snap.Ref, Version: snap.Version, Signer: snap.Signer}, nil
	}
	d, err := gitsrc.Discover(snap.FS, gitsrc.RepoName(src.URL))
	if err != nil {
		return nil, fmt.Errorf("survey %s: %w", src.Raw, err)
	}
	out := &Survey{Commit: snap.Commit, Ref: snap.Ref, Version: snap.Version, Signer: snap.Signer, Skills: d.Skills, Manifests: map[string]string{}}
	for _, f := range d.Skills {
		if f.Manifest == nil {
			continue
		}
		if look != nil {
			look(f, skillFS(snap, f.Dir))
		}
		p := path.Join(f.Dir, manifest.ManifestFile)
		if fi, err := fs.Stat(snap.FS, p); err != nil || fi.Size() > maxSurveyedManifest {
			continue
		}
		if b, err := fs.ReadFile(snap.FS, p); err == nil {
			out.Manifests[f.Dir] = string(b)
		}
	}
	d.Detach()
	return out, nil
}
