package gitsrc

import (
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/agentskills/agent/registry/signing"
)

// Signed is what was signed in the fetched commit: the annotated tag
// object first when the fetch resolved one, then the commit, each with
// its signature ("" when unsigned). A snapshot not read from git (an OCI
// artifact, a mirror) has nothing here.
func (s *Snapshot) Signed() ([]signing.GitObject, error) {
	if s == nil || s.repo == nil {
		return nil, nil
	}
	var out []signing.GitObject
	if !s.tag.IsZero() {
		t, err := s.repo.TagObject(s.tag)
		if err != nil {
			return nil, fmt.Errorf("read tag object %s: %w", Short(s.tag.String()), err)
		}
		payload, err := unsigned(t.EncodeWithoutSignature)
		if err != nil {
			return nil, fmt.Errorf("read tag object %s: %w", Short(s.tag.String()), err)
		}
		// A signed tag binds its own name: refs/tags/v2.0.0 pointing at
		// the signed tag object of v1.0.0 would otherwise install as a
		// signed 2.0.0. An unsigned one renamed with `git tag new old`
		// claims nothing and is left alone.
		if s.Kind == "tag" && t.Name != s.Ref && t.PGPSignature != "" {
			return nil, fmt.Errorf("%w: the ref refs/tags/%s points to the signed tag object %s, which was signed as %s, not %s",
				signing.ErrRelabelled, s.Ref, Short(t.Hash.String()), t.Name, s.Ref)
		}
		// A tag names the commit it signs; what was fetched must be it.
		if t.TargetType == plumbing.CommitObject && t.Target.String() == s.Commit {
			out = append(out, signing.GitObject{Kind: "tag " + t.Name, Hash: t.Hash.String(), Payload: payload, Signature: t.PGPSignature})
		}
	}
	c, err := s.repo.CommitObject(plumbing.NewHash(s.Commit))
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", Short(s.Commit), err)
	}
	payload, err := unsigned(c.EncodeWithoutSignature)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", Short(s.Commit), err)
	}
	return append(out, signing.GitObject{Kind: "commit", Hash: s.Commit, Payload: payload, Signature: c.PGPSignature}), nil
}

func unsigned(encode func(plumbing.EncodedObject) error) ([]byte, error) {
	o := &plumbing.MemoryObject{}
	if err := encode(o); err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
