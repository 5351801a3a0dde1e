package registry

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

// TestUpdatePartial adds a skill through a partial fetch and updates it
// after a commit that changes it and the large folder beside it: the
// update finds no local edits (the old commit's trees are in the cache),
// installs the new files, and brings none of the large folder; a skill
// added at depth 1 and updated through filter compares with the other
// cache the same way.
func TestUpdatePartial(t *testing.T) {
	t.Parallel()
	for _, first := range []bool{true, false} {
		t.Run(map[bool]string{true: "added through filter", false: "added at depth 1"}[first], func(t *testing.T) {
			t.Parallel()
			r := partialMonorepo(t)
			root := filepath.Dir(r.Dir())
			var mu sync.Mutex
			var sent int64
			partial := gittest.Handler(t, root, gittest.PartialClone...)
			whole := gittest.Handler(t, root)
			useFilter := first
			u := gittest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				mu.Lock()
				h := whole
				if useFilter {
					h = partial
				}
				mu.Unlock()
				cw := &countWriter{ResponseWriter: w}
				h.ServeHTTP(cw, req)
				mu.Lock()
				sent += cw.n
				mu.Unlock()
			})) + "/" + r.Name()
			s := newStore(t)
			mustAdd(t, s, u, func(req *AddRequest) { req.Skill = "pdf" }, buildPrep)
			r.Commit(t, map[string]string{"skills/pdf/references/a.md": "a, changed\n", "assets/big.bin": incompressible(1 << 16)}, "change")
			mu.Lock()
			useFilter, sent = true, 0
			mu.Unlock()
			res, err := NewPipeline(s).Update(context.Background(), UpdateRequest{Names: []string{"pdf"}}, buildPrep)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].Status != StatusUpdated || len(res[0].LocalEdits) != 0 {
				t.Fatalf("Update = %+v; want updated, no local edits", res)
			}
			es, _ := s.List()
			if got, err := os.ReadFile(filepath.Join(es[0].Path, "references", "a.md")); err != nil || string(got) != "a, changed\n" {
				t.Fatalf("a.md = %q, %v", got, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if sent > 32<<10 {
				t.Errorf("the update received %d bytes; the changed 64 KiB file outside the skill came too", sent)
			}
		})
	}
}

type countWriter struct {
	http.ResponseWriter
	n int64
}

func (w *countWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// incompressible is n bytes of random base64 text.
func incompressible(n int) string {
	b := make([]byte, n*3/4)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}
