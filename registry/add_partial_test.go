package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentskills/agent/internal/ground/semconv"
	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/registry/gitsrc"
)

// partialMonorepo: two skills (one with an executable script) next to a
// folder no skill needs.
func partialMonorepo(t *testing.T) *gittest.Repo {
	t.Helper()
	return gittest.NewRepo(t, map[string]string{
		"skills/pdf/SKILL.md":         skillMD("pdf"),
		"skills/pdf/scripts/tool.sh":  "#!/bin/sh\necho pdf\n",
		"skills/pdf/references/a.md":  "a\n",
		"skills/csv/SKILL.md":         skillMD("table"), // a name that is not its folder's
		"skills/csv/scripts/t.py":     "print('t')\n",
		"assets/big.bin":              strings.Repeat("q", 1<<16),
		"skills/pdf/references/b.txt": "b\n",
	})
}

// TestAddPartialSameHash adds one skill of a monorepo from a server that
// serves partial fetches and from one with git's defaults (the depth-1
// fetch): the lock's h1: and the installed files are the same. A skill
// selected by a name that is not its folder's is not in the first blob
// request; Need fetches its files.
func TestAddPartialSameHash(t *testing.T) {
	t.Parallel()
	for _, skill := range []string{"pdf", "table"} {
		t.Run(skill, func(t *testing.T) {
			t.Parallel()
			testAddPartialSameHash(t, skill)
		})
	}
}

func testAddPartialSameHash(t *testing.T, skill string) {
	r := partialMonorepo(t)
	root := filepath.Dir(r.Dir())
	partialURL := gittest.ServeHandler(t, gittest.Handler(t, root, gittest.PartialClone...)) + "/" + r.Name()
	wholeURL := gittest.ServeHandler(t, gittest.Handler(t, root)) + "/" + r.Name()
	var hashes []string
	var files []map[string]string
	for _, u := range []string{partialURL, wholeURL} {
		s := newStore(t)
		e := mustAdd(t, s, u, func(req *AddRequest) { req.Skill = skill }, buildPrep)
		if !strings.HasPrefix(e.DirHash, "h1:") {
			t.Fatalf("DirHash = %q", e.DirHash)
		}
		hashes = append(hashes, e.DirHash)
		files = append(files, tree(t, e.Path))
		if _, err := os.Stat(filepath.Join(e.Path, "big.bin")); err == nil {
			t.Fatal("a file outside the skill was installed")
		}
	}
	if hashes[0] != hashes[1] {
		t.Fatalf("h1: through filter %s, whole %s", hashes[0], hashes[1])
	}
	if len(files[0]) != len(files[1]) || len(files[0]) < 2 {
		t.Fatalf("installed files differ:\n%v\n%v", files[0], files[1])
	}
	for k, v := range files[0] {
		if files[1][k] != v {
			t.Fatalf("%s differs: %q vs %q", k, v, files[1][k])
		}
	}
}

// TestAddPartialWithheld: a server that advertises filter and then
// withholds one of the skill's files fails the add with ErrWithheld, and
// nothing is installed.
func TestAddPartialWithheld(t *testing.T) {
	t.Parallel()
	r := partialMonorepo(t)
	id := strings.TrimSpace(r.RunGit(t, "rev-parse", "HEAD:skills/pdf/references/a.md"))
	h := gittest.Handler(t, filepath.Dir(r.Dir()), gittest.PartialClone...)
	u := gittest.ServeHandler(t, gittest.WithholdBlob(h, id)) + "/" + r.Name()
	s := newStore(t)
	_, err := add(t, s, u, func(req *AddRequest) { req.Skill = "pdf" }, buildPrep)
	if !errors.Is(err, gitsrc.ErrWithheld) {
		t.Fatalf("Add = %v; want ErrWithheld", err)
	}
	es, err := s.List()
	if err != nil || len(es) != 0 {
		t.Fatalf("List = %v, %v; want nothing installed", es, err)
	}
	if _, err := os.Stat(filepath.Join(s.Home, "skills", "pdf")); err == nil {
		t.Fatal("the skill's folder was written")
	}
}

// TestAddPartialSpan: the fetch span says which path the fetch took.
func TestAddPartialSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	r := partialMonorepo(t)
	root := filepath.Dir(r.Dir())
	for want, u := range map[string]string{
		gitsrc.FetchedFilter: gittest.ServeHandler(t, gittest.Handler(t, root, gittest.PartialClone...)) + "/" + r.Name(),
		gitsrc.FetchedDepth:  gittest.ServeHandler(t, gittest.Handler(t, root)) + "/" + r.Name(),
	} {
		mustAdd(t, newStore(t), u, func(req *AddRequest) { req.Skill = "pdf" }, buildPrep)
		got := ""
		for _, sp := range rec.Ended() {
			if sp.Name() != "fetch "+u {
				continue
			}
			for _, a := range sp.Attributes() {
				if a.Key == semconv.AgentFetchPath {
					got = a.Value.AsString()
				}
			}
		}
		if got != want {
			t.Errorf("the fetch span of %s has %s=%q; want %q", u, semconv.AgentFetchPath, got, want)
		}
	}
}
