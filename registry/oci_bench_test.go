package registry_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/ocitest"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/ocisrc"
	"github.com/agentskills/agent/registry/provenance"
)

// BenchmarkAddOCIvsGit adds one skill (SKILL.md, 20 scripts, 20
// references) into a fresh AGENT_HOME, from a git repository served by git
// http-backend over loopback and from a real docker-registry on loopback
// holding the same folder. Untrusted (files only): what is timed is the
// fetch, the checks and the install.
func BenchmarkAddOCIvsGit(b *testing.B) {
	files := map[string]string{"SKILL.md": "---\nname: bench\ndescription: A skill to time add with.\nversion: 1.0.0\n---\nBody.\n"}
	for i := range 20 {
		files[fmt.Sprintf("scripts/s%02d.py", i)] = fmt.Sprintf("print(%d)\n", i) + string(make([]byte, 2048))
		files[fmt.Sprintf("references/r%02d.md", i)] = fmt.Sprintf("# ref %d\n", i) + string(make([]byte, 4096))
	}
	repo := gittest.NewRepo(b, files)
	gitURL := gittest.ServeRepo(b, repo)
	reg := ocitest.Start(b)
	client := &ocisrc.Client{Credentials: noCreds{}}
	pub := registry.NewStore(b.TempDir())
	pub.OCI = client
	if _, err := provenance.New(pub).Publish(context.Background(), provenance.PublishRequest{Skill: repo.Dir(), Ref: reg.Ref("bench/skill:1.0.0")}); err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, source string }{
		{"git", gitURL},
		{"oci", reg.Ref("bench/skill:1.0.0")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				s := registry.NewStore(filepath.Join(b.TempDir(), fmt.Sprint(i)))
				s.OCI = client
				if _, err := registry.NewPipeline(s).Add(context.Background(), registry.AddRequest{Source: gitsrc.Source{Raw: tc.source}}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type noCreds struct{}

func (noCreds) Get(context.Context, string) (auth.Credential, error) {
	return auth.EmptyCredential, nil
}
func (noCreds) Put(context.Context, string, auth.Credential) error { return nil }
func (noCreds) Delete(context.Context, string) error               { return nil }
