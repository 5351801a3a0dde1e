package registry_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/ocitest"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/provenance"
	"github.com/agentskills/agent/registry/signing"

	"oras.land/oras-go/v2/registry/remote"
)

func signedSkill(name string) map[string]string {
	return map[string]string{
		"SKILL.md":         "---\nname: " + name + "\ndescription: A skill to sign.\nversion: 1.0.0\n---\nBody.\n",
		"scripts/greet.py": "print('hello')\n",
	}
}

func policy(t *testing.T, required bool, signers ...signing.Signer) *signing.Policy {
	t.Helper()
	p, err := signing.NewPolicy(required, signers, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// signedStore is a store in a new home whose policy accepts signers and,
// if required, refuses anything they did not sign.
func signedStore(t *testing.T, required bool, signers ...signing.Signer) *registry.Store {
	t.Helper()
	s := registry.NewStore(t.TempDir())
	s.Signatures = policy(t, required, signers...)
	return s
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSignedOCISkill publishes three skills to a real docker-registry
// (distribution 2.8: no referrers API, so the bundles go under the
// sha256-<hex> tag scheme), signs one with the team's key and one with
// another, and adds each under a policy that requires the team's
// signature.
func TestSignedOCISkill(t *testing.T) {
	reg := ocitest.Start(t)
	client := &ocisrc.Client{Credentials: noCreds{}}
	ctx := context.Background()
	teamKey, teamPub := gittest.SSHKey(t, "team@example.com")
	otherKey, _ := gittest.SSHKey(t, "other@example.com")

	pub := registry.NewStore(t.TempDir())
	pub.OCI = client
	for _, name := range []string{"signed", "unsigned", "other"} {
		dir := gittest.NewRepo(t, signedSkill(name)).Dir()
		if _, err := provenance.New(pub).Publish(ctx, provenance.PublishRequest{Skill: dir, Ref: reg.Ref("team/" + name + ":1.0.0")}); err != nil {
			t.Fatal(err)
		}
	}
	signed, err := provenance.New(pub).Sign(ctx, provenance.SignRequest{Skill: reg.Ref("team/signed:1.0.0"), Key: readFile(t, teamKey)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.New(pub).Sign(ctx, provenance.SignRequest{Skill: reg.Ref("team/other:1.0.0"), Key: readFile(t, otherKey)}); err != nil {
		t.Fatal(err)
	}
	team, err := signing.ParseKey([]byte(teamPub))
	if err != nil {
		t.Fatal(err)
	}
	if signed.Signer.Fingerprint != team.Fingerprint {
		t.Fatalf("signed with %s, want the team key %s", signed.Signer.Fingerprint, team.Fingerprint)
	}
	// distribution 2.8 has no referrers API: oras-go kept the bundle in
	// the index under the tag scheme.
	tags, err := client.Tags(ctx, signed.Ref)
	if err != nil {
		t.Fatal(err)
	}
	scheme := strings.Replace(signed.Ref.Digest, ":", "-", 1)
	if !strings.Contains(strings.Join(tags, " "), scheme) {
		t.Errorf("tags %v: no %s (the referrers tag scheme)", tags, scheme)
	}

	tests := []struct {
		name, source string
		required     bool
		want         error
	}{
		{"signed by the team", reg.Ref("team/signed:1.0.0"), true, nil},
		{"signed, by digest", reg.Ref("team/signed@" + signed.Ref.Digest), true, nil},
		{"unsigned", reg.Ref("team/unsigned:1.0.0"), true, signing.ErrUnsigned},
		{"signed by another key", reg.Ref("team/other:1.0.0"), true, signing.ErrUntrustedSigner},
		{"unsigned, signatures not required", reg.Ref("team/unsigned:1.0.0"), false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := signedStore(t, tc.required, signing.Signer{Key: teamPub})
			s.OCI = client
			e, err := registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: tc.source}}, nil)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Add: %v, want %v", err, tc.want)
				}
				if es, _ := s.List(); len(es) != 0 {
					t.Fatalf("a refused skill was installed: %+v", es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantSigned := strings.HasPrefix(tc.name, "signed")
			if e.Trusted != wantSigned || strings.Contains(e.Signer, team.Fingerprint) != wantSigned {
				t.Fatalf("trusted %v, signer %q; want trusted (and signed by the team) = %v", e.Trusted, e.Signer, wantSigned)
			}
			// What registry.json holds says so too.
			got, err := s.Get(e.Canonical)
			if err != nil || got.Signer != e.Signer || got.Trusted != e.Trusted {
				t.Fatalf("registry.json holds signer %q trusted %v (%v), want %q %v", got.Signer, got.Trusted, err, e.Signer, e.Trusted)
			}
		})
	}

	// RequireSigned without a policy that requires it: an unsigned skill
	// is not installed trusted without asking.
	s := signedStore(t, false, signing.Signer{Key: teamPub})
	s.OCI = client
	_, err = registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: reg.Ref("team/other:1.0.0")}, RequireSigned: true}, nil)
	if !errors.Is(err, registry.ErrNotVerified) {
		t.Fatalf("RequireSigned, signed by another key: %v, want ErrNotVerified", err)
	}
}

// TestSignedGitTag makes tags and a commit signed with SSH keys by the
// real git (gpg.format=ssh), serves the repository with git http-backend
// and adds each under a policy that names the repository with the
// release key.
func TestSignedGitTag(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, signedSkill("tagged"))
	key, pubLine := gittest.SSHKey(t, "release@example.com")
	otherKey, _ := gittest.SSHKey(t, "other@example.com")
	repo.SSHSign(t, key, "tag", "-s", "v1.0.0", "-m", "release 1.0.0")
	repo.Commit(t, map[string]string{"scripts/greet.py": "print('hello 1.1')\n"}, "1.1")
	repo.SSHSign(t, otherKey, "tag", "-s", "v1.1.0", "-m", "release 1.1.0")
	repo.Commit(t, map[string]string{"scripts/greet.py": "print('hello 1.2')\n"}, "1.2")
	repo.AnnotatedTag(t, "v1.2.0", "unsigned")
	url := gittest.ServeRepo(t, repo)
	release, err := signing.ParseKey([]byte(pubLine))
	if err != nil {
		t.Fatal(err)
	}

	add := func(t *testing.T, ref string) (registry.Entry, error) {
		s := signedStore(t, false, signing.Signer{Key: pubLine, Sources: []string{url}})
		return registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: url, Ref: ref}}, nil)
	}
	tests := []struct {
		name, ref string
		want      error
	}{
		{"tag signed with the release key", "v1.0.0", nil},
		{"tag signed with another key", "v1.1.0", signing.ErrUntrustedSigner},
		{"unsigned tag and commit", "v1.2.0", signing.ErrUnsigned},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := add(t, tc.ref)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Add: %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !e.Trusted || !strings.Contains(e.Signer, release.Fingerprint) {
				t.Fatalf("trusted %v, signer %q; want trusted, signed by %s", e.Trusted, e.Signer, release.Fingerprint)
			}
		})
	}

	// A commit signed with the release key (git commit -S) is verified
	// on a branch, where there is no tag.
	repo.SSHSign(t, key, "commit", "-S", "--allow-empty", "-m", "signed commit")
	e, err := add(t, "main")
	if err != nil {
		t.Fatalf("Add of a signed commit: %v", err)
	}
	if e.CommitSHA != repo.Head(t) || !strings.Contains(e.Signer, release.Fingerprint) {
		t.Fatalf("commit %s signer %q, want %s signed by %s", e.CommitSHA, e.Signer, repo.Head(t), release.Fingerprint)
	}

	// The same commit read in place (a local path: no transport).
	s := signedStore(t, true, signing.Signer{Key: pubLine})
	if _, err := registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: filepath.Clean(repo.Dir())}}, nil); err != nil {
		t.Fatalf("Add from a local path of a signed commit: %v", err)
	}
}

// TestSignedGitTagGPG signs tags and a commit with real gpg keys, as a
// team that signs with GPG does, and adds them under a policy listing the
// release key's armored public key (gpg --export --armor).
func TestSignedGitTagGPG(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, signedSkill("gpgtagged"))
	key := gittest.NewGPGKey(t, "Release <release@example.com>")
	other := gittest.NewGPGKey(t, "Other <other@example.com>")
	repo.GPGSign(t, key, "tag", "-s", "v1.0.0", "-m", "release 1.0.0")
	repo.Commit(t, map[string]string{"scripts/greet.py": "print('hello 1.1')\n"}, "1.1")
	repo.GPGSign(t, other, "tag", "-s", "v1.1.0", "-m", "release 1.1.0")
	repo.Commit(t, map[string]string{"scripts/greet.py": "print('hello 1.2')\n"}, "1.2")
	repo.AnnotatedTag(t, "v1.2.0", "unsigned")
	repo.GPGSign(t, key, "commit", "-S", "--allow-empty", "-m", "signed commit")
	url := gittest.ServeRepo(t, repo)

	release, err := signing.ParseKey([]byte(key.Public))
	if err != nil {
		t.Fatalf("ParseKey of gpg --export --armor: %v", err)
	}
	if !release.PGP() {
		t.Fatalf("ParseKey: %s is not an OpenPGP key", release)
	}
	tests := []struct {
		name, ref string
		want      error
	}{
		{"tag signed with the release key", "v1.0.0", nil},
		{"tag signed with another key", "v1.1.0", signing.ErrUntrustedSigner},
		{"unsigned tag and commit", "v1.2.0", signing.ErrUnsigned},
		{"commit signed with the release key", "main", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := signedStore(t, true, signing.Signer{Key: key.Public})
			e, err := registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: url, Ref: tc.ref}}, nil)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("Add: %v, want %v", err, tc.want)
				}
				if es, _ := s.List(); len(es) != 0 {
					t.Fatalf("a refused skill was installed: %+v", es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !e.Trusted || !strings.Contains(e.Signer, release.Fingerprint) {
				t.Fatalf("trusted %v, signer %q; want trusted, signed by %s", e.Trusted, e.Signer, key.Fingerprint)
			}
		})
	}
}

// TestSyncSeesTheSignedTag locks a skill added from a tag an accepted key
// signed (its commit unsigned, as teams that sign releases do) and syncs
// it into a fresh home whose policy requires that key: sync must see the
// tag's signature, not only the commit's.
func TestSyncSeesTheSignedTag(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, signedSkill("synctag"))
	key, pubLine := gittest.SSHKey(t, "release@example.com")
	repo.SSHSign(t, key, "tag", "-s", "v1.0.0", "-m", "release 1.0.0")
	url := gittest.ServeRepo(t, repo)
	required := func(t *testing.T) *registry.Store { return signedStore(t, true, signing.Signer{Key: pubLine}) }
	e, err := registry.NewPipeline(required(t)).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: url, Ref: "v1.0.0"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := registry.NewLock([]registry.Entry{e})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("tag still names the commit", func(t *testing.T) {
		s := required(t)
		if _, err := registry.NewPipeline(s).Sync(ctx, l, registry.SyncRequest{}, nil); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		got, err := s.Get("synctag")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Trusted || got.Signer != e.Signer || got.CommitSHA != e.CommitSHA {
			t.Fatalf("synced trusted %v signer %q commit %s; want trusted, %q, %s", got.Trusted, got.Signer, got.CommitSHA, e.Signer, e.CommitSHA)
		}
	})
	t.Run("tag moved to an unsigned commit", func(t *testing.T) {
		repo.Commit(t, map[string]string{"scripts/greet.py": "print('moved')\n"}, "moved")
		repo.RunGit(t, "tag", "-f", "-a", "v1.0.0", "-m", "moved, unsigned")
		s := required(t)
		_, err := registry.NewPipeline(s).Sync(ctx, l, registry.SyncRequest{}, nil)
		if !errors.Is(err, signing.ErrUnsigned) {
			t.Fatalf("Sync: %v, want %v", err, signing.ErrUnsigned)
		}
		if es, _ := s.List(); len(es) != 0 {
			t.Fatalf("a refused skill was installed: %+v", es)
		}
	})
}

// TestRelabelledSignedTag points refs/tags/v2.0.0 at the signed tag object
// of v1.0.0 (git update-ref, as a server's owner could) and adds 2.0.0
// under a policy that accepts the release key: the signature binds the
// tag's own name, so the relabel is refused naming both, whether the
// policy requires signatures or not and however 2.0.0 is asked for;
// v1.0.0 itself still installs as signed.
func TestRelabelledSignedTag(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t, signedSkill("relabel"))
	key, pubLine := gittest.SSHKey(t, "release@example.com")
	repo.SSHSign(t, key, "tag", "-s", "v1.0.0", "-m", "release 1.0.0")
	tagObject := strings.TrimSpace(repo.RunGit(t, "rev-parse", "v1.0.0"))
	repo.RunGit(t, "update-ref", "refs/tags/v2.0.0", tagObject)
	url := gittest.ServeRepo(t, repo)
	release, err := signing.ParseKey([]byte(pubLine))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name            string
		required        bool
		ref, constraint string
		relabelled      bool
	}{
		{name: "signed v1.0.0", ref: "v1.0.0"},
		{name: "signed v1.0.0, required", required: true, ref: "v1.0.0"},
		{name: "v2.0.0", ref: "v2.0.0", relabelled: true},
		{name: "v2.0.0, required", required: true, ref: "v2.0.0", relabelled: true},
		{name: "2.0.0 without the v", ref: "2.0.0", relabelled: true},
		{name: "constraint ^2", constraint: "^2", relabelled: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := signedStore(t, tc.required, signing.Signer{Key: pubLine, Sources: []string{url}})
			e, err := registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: url, Ref: tc.ref, Constraint: tc.constraint}}, nil)
			if tc.relabelled {
				if !errors.Is(err, signing.ErrRelabelled) || !strings.Contains(err.Error(), "v1.0.0") || !strings.Contains(err.Error(), "v2.0.0") {
					t.Fatalf("Add: %v; want %v naming v1.0.0 and v2.0.0", err, signing.ErrRelabelled)
				}
				t.Log(err)
				if es, _ := s.List(); len(es) != 0 {
					t.Fatalf("a relabelled release was installed: %+v", es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !e.Trusted || !strings.Contains(e.Signer, release.Fingerprint) || e.Version != "1.0.0" {
				t.Fatalf("trusted %v, signer %q, version %q; want trusted 1.0.0 signed by %s", e.Trusted, e.Signer, e.Version, release.Fingerprint)
			}
			if tc.required {
				relabelledLock(t, e, url, pubLine)
			}
		})
	}
}

// relabelledLock syncs a lock of e (the signed v1.0.0) edited to name
// v2.0.0 into a home that requires the release key: the relabel is
// refused there too, not fetched again by SHA where it would go unseen.
func relabelledLock(t *testing.T, e registry.Entry, url, pubLine string) {
	t.Helper()
	l, err := registry.NewLock([]registry.Entry{e})
	if err != nil {
		t.Fatal(err)
	}
	s := signedStore(t, true, signing.Signer{Key: pubLine, Sources: []string{url}})
	if _, err := registry.NewPipeline(s).Sync(context.Background(), l, registry.SyncRequest{}, nil); err != nil {
		t.Fatalf("Sync of the signed v1.0.0: %v", err)
	}
	l.Skills[0].Ref, l.Skills[0].Version = "v2.0.0", "2.0.0"
	s = signedStore(t, true, signing.Signer{Key: pubLine, Sources: []string{url}})
	_, err = registry.NewPipeline(s).Sync(context.Background(), l, registry.SyncRequest{}, nil)
	if !errors.Is(err, signing.ErrRelabelled) {
		t.Fatalf("Sync of a lock naming v2.0.0: %v; want %v", err, signing.ErrRelabelled)
	}
	if es, _ := s.List(); len(es) != 0 {
		t.Fatalf("a relabelled release was synced: %+v", es)
	}
}

// TestRelabelledOCITag signs a published 1.0.0 and points the tag 2.0.0
// (and latest) at its manifest with the registry's own tag API, as the
// registry's owner could: a version tag must be the version the manifest
// was signed as, so 2.0.0 is refused naming both, while 1.0.0, the
// digest and latest (which claims no version) install as signed. A
// signed artifact whose SKILL.md has no version binds none: its version
// tag is refused too.
func TestRelabelledOCITag(t *testing.T) {
	reg := ocitest.Start(t)
	client := &ocisrc.Client{Credentials: noCreds{}}
	ctx := context.Background()
	key, pubLine := gittest.SSHKey(t, "team@example.com")
	team, err := signing.ParseKey([]byte(pubLine))
	if err != nil {
		t.Fatal(err)
	}
	pub := registry.NewStore(t.TempDir())
	pub.OCI = client
	publishSigned := func(name string, files map[string]string) provenance.SignedArtifact {
		dir := gittest.NewRepo(t, files).Dir()
		if _, err := provenance.New(pub).Publish(ctx, provenance.PublishRequest{Skill: dir, Ref: reg.Ref("team/" + name + ":1.0.0")}); err != nil {
			t.Fatal(err)
		}
		signed, err := provenance.New(pub).Sign(ctx, provenance.SignRequest{Skill: reg.Ref("team/" + name + ":1.0.0"), Key: readFile(t, key)})
		if err != nil {
			t.Fatal(err)
		}
		return signed
	}
	signed := publishSigned("relabel", signedSkill("relabel"))
	noVersion := signedSkill("noversion")
	noVersion["SKILL.md"] = strings.Replace(noVersion["SKILL.md"], "version: 1.0.0\n", "", 1)
	publishSigned("noversion", noVersion)

	repo, err := remote.NewRepository(reg.Host + "/team/relabel")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	desc, err := repo.Resolve(ctx, "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"2.0.0", "latest"} {
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name, source string
		required     bool
		relabelled   string // the tag named in the refusal; "" installs
	}{
		{"signed 1.0.0", reg.Ref("team/relabel:1.0.0"), true, ""},
		{"by digest", reg.Ref("team/relabel@" + signed.Ref.Digest), true, ""},
		{"latest", reg.Ref("team/relabel:latest"), true, ""},
		{"2.0.0", reg.Ref("team/relabel:2.0.0"), false, "2.0.0"},
		{"2.0.0, required", reg.Ref("team/relabel:2.0.0"), true, "2.0.0"},
		{"constraint ^2", reg.Ref("team/relabel@^2"), true, "2.0.0"},
		{"signed with no version", reg.Ref("team/noversion:1.0.0"), true, "1.0.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := signedStore(t, tc.required, signing.Signer{Key: pubLine})
			s.OCI = client
			e, err := registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: gitsrc.Source{Raw: tc.source}}, nil)
			if tc.relabelled != "" {
				if !errors.Is(err, signing.ErrRelabelled) || !strings.Contains(err.Error(), "tag "+tc.relabelled) {
					t.Fatalf("Add: %v; want %v naming the tag %s", err, signing.ErrRelabelled, tc.relabelled)
				}
				t.Log(err)
				if tc.relabelled == "2.0.0" && !strings.Contains(err.Error(), "signed as version 1.0.0") {
					t.Fatalf("Add: %v; want it to name the signed version 1.0.0", err)
				}
				if es, _ := s.List(); len(es) != 0 {
					t.Fatalf("a relabelled artifact was installed: %+v", es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !e.Trusted || !strings.Contains(e.Signer, team.Fingerprint) || e.Version != "1.0.0" {
				t.Fatalf("trusted %v, signer %q, version %q; want trusted 1.0.0 signed by %s", e.Trusted, e.Signer, e.Version, team.Fingerprint)
			}
		})
	}
}
