package registry_test

import (
	"context"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/ocitest"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/provenance"
)

// TestAddParsesTheSourceOnce: an add fetches the typed source that
// ParseSource made, not its URL string again. The URL is spoiled after the
// parse (ocisrc.Parse refuses it); the add still pulls the artifact, so no
// step between the parse and the fetch re-read the URL.
func TestAddParsesTheSourceOnce(t *testing.T) {
	reg := ocitest.Start(t)
	client := &ocisrc.Client{Credentials: noCreds{}}
	ctx := context.Background()
	pub := registry.NewStore(t.TempDir())
	pub.OCI = client
	dir := gittest.NewRepo(t, signedSkill("once")).Dir()
	published, err := provenance.New(pub).Publish(ctx, provenance.PublishRequest{Skill: dir, Ref: reg.Ref("team/once:1.0.0")})
	if err != nil {
		t.Fatal(err)
	}

	src, err := gitsrc.ParseSource(reg.Ref("team/once:1.0.0"))
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != gitsrc.KindOCI || src.OCI.Repository != "team/once" {
		t.Fatalf("ParseSource = %+v, want KindOCI of team/once", src)
	}
	src.URL += "/NOT A REFERENCE"
	if _, err := ocisrc.Parse(src.URL); err == nil {
		t.Fatalf("ocisrc.Parse(%q) took the spoiled URL; the test proves nothing", src.URL)
	}
	s := registry.NewStore(t.TempDir())
	s.OCI = client
	e, err := registry.NewPipeline(s).Add(ctx, registry.AddRequest{Source: src}, nil)
	if err != nil {
		t.Fatalf("add re-read the source URL: %v", err)
	}
	if e.Source != registry.SourceOCI || e.CommitSHA != published.Ref.Digest {
		t.Fatalf("entry %s at %s, want oci at %s", e.Source, e.CommitSHA, published.Ref.Digest)
	}
}
