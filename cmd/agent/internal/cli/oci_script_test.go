package cli_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/ocitest"
)

// TestOCIScripts runs testdata/oci/*.txtar against a real docker-registry
// (started per script, on a free loopback port) and a git server behind a
// proxy that a script can stop ("stopgit"), to show that a mirror serves a
// sync with the git host gone.
func TestOCIScripts(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/usr/bin/docker-registry"); err != nil {
		ocitest.Start(t) // skips with the reason
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join(moduleRoot, "testdata", "oci"),
		Setup: func(env *testscript.Env) error {
			tb := env.T().(testing.TB)
			reg := ocitest.Start(tb)
			repos := newScriptRepos(tb)
			base, err := url.Parse(gittest.Serve(tb, repos.root))
			if err != nil {
				return err
			}
			proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(base))
			tb.Cleanup(proxy.Close)
			env.Setenv("REGISTRY", reg.Host)
			env.Setenv("GIT", proxy.URL)
			env.Setenv("AGENT_HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("AGENT_PLUGIN_CACHE", os.Getenv("AGENT_PLUGIN_CACHE")) // TestMain's
			// Credentials from an empty Docker configuration, never the
			// machine's.
			env.Setenv("DOCKER_CONFIG", filepath.Join(env.WorkDir, ".docker"))
			env.Values[ociKey{}] = &ociScript{reg: reg, git: proxy}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"stopgit":     cmdStopGit,
			"corruptblob": cmdCorruptBlob,
			"envfrom":     cmdEnvFrom,
			"ocitag":      cmdOCITag,
		},
	})
}

type ociKey struct{}

type ociScript struct {
	reg *ocitest.Registry
	git *httptest.Server
}

func ociOf(ts *testscript.TestScript) *ociScript {
	return ts.Value(ociKey{}).(*ociScript)
}

// cmdStopGit closes the git server: every later fetch from $GIT fails.
func cmdStopGit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: stopgit")
	}
	ociOf(ts).git.Close()
}

// cmdCorruptBlob changes, in the registry's storage, the first byte of the
// blob holding the content of a file, keeping its size; it sets WANT to
// the blob's digest and GOT to the digest of what the registry now serves.
func cmdCorruptBlob(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: corruptblob <file>")
	}
	body, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	want := sha256.Sum256(body)
	bad := append([]byte(nil), body...)
	bad[0] ^= 0x20
	got := sha256.Sum256(bad)
	p := ociOf(ts).reg.BlobPath("sha256:" + hex.EncodeToString(want[:]))
	ts.Check(os.WriteFile(p, bad, 0o644))
	ts.Setenv("WANT", "sha256:"+hex.EncodeToString(want[:]))
	ts.Setenv("GOT", "sha256:"+hex.EncodeToString(got[:]))
}

// cmdEnvFrom sets an environment variable to a file's first line.
func cmdEnvFrom(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfrom NAME file")
	}
	b, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	line, _, _ := strings.Cut(string(b), "\n")
	ts.Setenv(args[0], strings.TrimSpace(line))
}

// cmdOCITag points another tag at the manifest a tag names, through the
// registry's own API, as the registry's owner could: ocitag <repo> <tag> <new>.
func cmdOCITag(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: ocitag <repo> <tag> <new tag>")
	}
	repo, err := remote.NewRepository(ociOf(ts).reg.Host + "/" + args[0])
	ts.Check(err)
	repo.PlainHTTP = true
	ctx := context.Background()
	desc, err := repo.Resolve(ctx, args[1])
	ts.Check(err)
	ts.Check(repo.Tag(ctx, desc, args[2]))
}
