package gitsrc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// partialRepo is a monorepo of two skills next to a large folder that no
// skill needs.
func partialRepo(t *testing.T) *gittest.Repo {
	t.Helper()
	return gittest.NewRepo(t, map[string]string{
		"skills/pdf/SKILL.md":            string(skillFile("pdf").Data),
		"skills/pdf/scripts/run.py":      "print('pdf')\n",
		"skills/pdf/references/notes.md": "notes\n",
		"skills/csv/SKILL.md":            string(skillFile("csv").Data),
		"skills/csv/scripts/run.py":      "print('csv')\n",
		"assets/big.bin":                 strings.Repeat("0123456789abcdef", 1<<14),
		"README.md":                      "monorepo\n",
	})
}

// servers serves r with git daemon and git http-backend, each with the
// partial-clone settings on (partial) or left at git's defaults.
func servers(t *testing.T, r *gittest.Repo, partial bool) map[string]string {
	t.Helper()
	var cfg []string
	if partial {
		cfg = gittest.PartialClone
	}
	root := filepath.Dir(r.Dir())
	return map[string]string{
		"daemon": gittest.ServeDaemon(t, root, cfg...) + "/" + r.Name(),
		"http":   gittest.ServeHandler(t, gittest.Handler(t, root, cfg...)) + "/" + r.Name(),
	}
}

// TestFetchPartial fetches one skill of a monorepo from real servers: with
// filter and wants by id allowed it takes the partial path, brings that
// skill's files and no byte of assets/; with git's defaults it falls back
// to the depth-1 fetch. Either way the skill's files read the same.
func TestFetchPartial(t *testing.T) {
	t.Parallel()
	r := partialRepo(t)
	for _, partial := range []bool{true, false} {
		for name, u := range servers(t, r, partial) {
			t.Run(fmt.Sprintf("%s/filter=%v", name, partial), func(t *testing.T) {
				t.Parallel()
				var log debugLog
				g := &GoGit{Debug: log.add}
				snap, err := g.Fetch(context.Background(), FetchRequest{URL: u, CacheDir: t.TempDir(), Skills: []string{"pdf"}})
				if err != nil {
					t.Fatal(err)
				}
				want := FetchedDepth
				if partial {
					want = FetchedFilter
				}
				if snap.Fetched != want {
					t.Fatalf("Fetched = %q; want %q (debug log: %s)", snap.Fetched, want, log.String())
				}
				if !strings.Contains(log.String(), "fetch: "+map[bool]string{true: "partial", false: "the server serves no partial fetch"}[partial]) {
					t.Errorf("the debug log does not say which path was taken: %s", log.String())
				}
				if got, err := fs.ReadFile(snap.FS, "skills/pdf/scripts/run.py"); err != nil || string(got) != "print('pdf')\n" {
					t.Fatalf("run.py = %q, %v", got, err)
				}
				// Discovery reads every SKILL.md, fetched or not.
				if _, err := fs.ReadFile(snap.FS, "skills/csv/SKILL.md"); err != nil {
					t.Fatalf("csv's SKILL.md: %v", err)
				}
				_, err = fs.ReadFile(snap.FS, "assets/big.bin")
				if partial == (err == nil) {
					t.Fatalf("assets/big.bin read: %v; want it fetched only without filter", err)
				}
				// Need fetches what the hint left out, in one request.
				if err := snap.Need(context.Background(), "skills/csv", "assets"); err != nil {
					t.Fatal(err)
				}
				for _, f := range []string{"skills/csv/scripts/run.py", "assets/big.bin"} {
					if _, err := fs.ReadFile(snap.FS, f); err != nil {
						t.Fatalf("%s after Need: %v", f, err)
					}
				}
			})
		}
	}
}

// TestFetchPartialSameFiles writes one skill fetched through filter and
// the same skill fetched whole, and compares every file and mode: the
// lock's h1: of the two is then the same (registry's add test checks the
// hash itself).
func TestFetchPartialSameFiles(t *testing.T) {
	t.Parallel()
	r := partialRepo(t)
	r.Commit(t, map[string]string{"skills/pdf/scripts/tool.sh": "#!/bin/sh\necho hi\n"}, "tool") // executable
	u := servers(t, r, true)["http"]
	write := func(skills []string) string {
		snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: t.TempDir(), Skills: skills})
		if err != nil {
			t.Fatal(err)
		}
		if (skills != nil) != (snap.Fetched == FetchedFilter) {
			t.Fatalf("Fetched = %q with Skills %v", snap.Fetched, skills)
		}
		out := filepath.Join(t.TempDir(), "repo")
		if err := CheckoutSkill(snap, "skills/pdf", out, nil, Limits{}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	partial, full := write([]string{"skills/pdf"}), write(nil)
	if a, b := listTree(t, partial), listTree(t, full); a != b || !strings.Contains(a, "tool.sh 755") {
		t.Fatalf("through filter:\n%s\nwhole:\n%s", a, b)
	}
}

// listTree lists a folder's files with their modes and contents.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %o %q\n", rel, fi.Mode().Perm(), data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFetchPartialWithheld serves a repository through a proxy that drops
// one blob's want line from the blob request: the server advertised
// filter, then did not send a file the skill needs. The fetch fails with
// ErrWithheld and leaves no cache behind.
func TestFetchPartialWithheld(t *testing.T) {
	t.Parallel()
	r := partialRepo(t)
	h := gittest.Handler(t, filepath.Dir(r.Dir()), gittest.PartialClone...)
	withheld := blobHash(t, r, "skills/pdf/scripts/run.py")
	u := gittest.ServeHandler(t, gittest.WithholdBlob(h, withheld)) + "/" + r.Name()
	cache := filepath.Join(t.TempDir(), "cache")
	_, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: cache, Skills: []string{"pdf"}})
	if !errors.Is(err, ErrWithheld) {
		t.Fatalf("Fetch = %v; want ErrWithheld", err)
	}
	if !strings.Contains(err.Error(), withheld[:12]) {
		t.Errorf("the error does not name the missing file: %v", err)
	}
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("a failed fetch left %s in the cache", e.Name())
		}
	}
}

// blobHash is the blob id of a file at r's HEAD.
func blobHash(t *testing.T, r *gittest.Repo, file string) string {
	t.Helper()
	return strings.TrimSpace(r.RunGit(t, "rev-parse", "HEAD:"+file))
}

// debugLog collects GoGit.Debug messages.
type debugLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *debugLog) add(msg string, kv ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(&l.b, append([]any{msg}, kv...)...)
}

func (l *debugLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFetchPartialRequests counts upload-pack requests: several skills,
// or every skill, of one commit are one tree request and one blob
// request, after one listing of the refs; a second fetch of the same
// commit asks only for blobs the cache lacks, and none when it has them.
func TestFetchPartialRequests(t *testing.T) {
	t.Parallel()
	r := partialRepo(t)
	for _, tc := range []struct {
		name   string
		skills []string
		posts  int
		then   []string // a second fetch into the same cache
		posts2 int
	}{
		{name: "two skills", skills: []string{"pdf", "skills/csv"}, posts: 2, then: []string{"pdf"}, posts2: 0},
		{name: "all skills", skills: []string{AllSkills}, posts: 2, then: []string{AllSkills}, posts2: 0},
		{name: "one then another", skills: []string{"pdf"}, posts: 2, then: []string{"csv"}, posts2: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			posts, gets := 0, 0
			h := gittest.Handler(t, filepath.Dir(r.Dir()), gittest.PartialClone...)
			u := gittest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				mu.Lock()
				if req.Method == http.MethodPost {
					posts++
				} else {
					gets++
				}
				mu.Unlock()
				h.ServeHTTP(w, req)
			})) + "/" + r.Name()
			count := func() (int, int) {
				mu.Lock()
				defer mu.Unlock()
				n, m := posts, gets
				posts, gets = 0, 0
				return n, m
			}
			cache := t.TempDir()
			for i, skills := range [][]string{tc.skills, tc.then} {
				snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: cache, Skills: skills})
				if err != nil {
					t.Fatal(err)
				}
				n, listings := count()
				if want := []int{tc.posts, tc.posts2}[i]; n != want || listings != 1 {
					t.Fatalf("fetch %d of %v sent %d upload-pack requests and %d listings; want %d and 1", i+1, skills, n, listings, want)
				}
				if _, err := fs.ReadFile(snap.FS, "skills/pdf/scripts/run.py"); err != nil && i == 0 {
					t.Fatalf("run.py: %v", err)
				}
			}
		})
	}
}

// TestFetchPartialSettings: the partial path needs both server settings;
// with filter alone (no wants by id) the fetch takes the depth-1 path.
// Pack limits hold on the tree request and on the blob request.
func TestFetchPartialSettings(t *testing.T) {
	t.Parallel()
	r := partialRepo(t)
	r.Commit(t, map[string]string{"skills/pdf/data.bin": strings.Repeat("z", 64<<10)}, "data")
	root := filepath.Dir(r.Dir())
	for _, tc := range []struct {
		name    string
		config  []string
		maxFile int64
		want    string
		err     error
	}{
		{name: "filter and any SHA-1", config: gittest.PartialClone, want: FetchedFilter},
		{name: "filter and reachable SHA-1", config: []string{"uploadpack.allowFilter=true", "uploadpack.allowReachableSHA1InWant=true"}, want: FetchedFilter},
		{name: "filter alone", config: []string{"uploadpack.allowFilter=true"}, want: FetchedDepth},
		{name: "wants by id alone", config: []string{"uploadpack.allowAnySHA1InWant=true"}, want: FetchedDepth},
		{name: "tree request over the file limit", config: gittest.PartialClone, maxFile: 64, err: ErrTooLarge},
		{name: "blob request over the file limit", config: gittest.PartialClone, maxFile: 32 << 10, err: ErrTooLarge},
	} {
		for _, srv := range []string{"daemon", "http"} {
			t.Run(srv+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				u := gittest.ServeDaemon(t, root, tc.config...)
				if srv == "http" {
					u = gittest.ServeHandler(t, gittest.Handler(t, root, tc.config...))
				}
				u += "/" + r.Name()
				cache := filepath.Join(t.TempDir(), "cache")
				snap, err := (&GoGit{}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: cache, Skills: []string{"pdf"}, MaxFile: tc.maxFile})
				if tc.err != nil {
					if !errors.Is(err, tc.err) {
						t.Fatalf("Fetch = %v; want %v", err, tc.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if snap.Fetched != tc.want {
					t.Fatalf("Fetched = %q; want %q", snap.Fetched, tc.want)
				}
			})
		}
	}
}

// TestFetchPartialRefused: a server that serves the blob:none request but
// then refuses the wants by id gets the depth-1 fetch, and the skill reads
// whole. git http-backend checks wants by reachability on every stateless
// request, so the refusal is upload-pack's own error line, sent in its
// place for the blob request (no filter, no deepen).
func TestFetchPartialRefused(t *testing.T) {
	t.Parallel()
	r := partialRepo(t)
	h := gittest.Handler(t, filepath.Dir(r.Dir()), gittest.PartialClone...)
	u := gittest.ServeHandler(t, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if !bytes.Contains(body, []byte("filter ")) && !bytes.Contains(body, []byte("deepen ")) {
				w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
				msg := "ERR upload-pack: not our ref\n"
				fmt.Fprintf(w, "%04x%s", len(msg)+4, msg)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, req)
	})) + "/" + r.Name()
	var log debugLog
	snap, err := (&GoGit{Debug: log.add}).Fetch(context.Background(), FetchRequest{URL: u, CacheDir: t.TempDir(), Skills: []string{"pdf"}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Fetched != FetchedDepth {
		t.Fatalf("Fetched = %q; want %q\n%s", snap.Fetched, FetchedDepth, log.String())
	}
	if got, err := fs.ReadFile(snap.FS, "skills/pdf/scripts/run.py"); err != nil || string(got) != "print('pdf')\n" {
		t.Fatalf("run.py = %q, %v", got, err)
	}
	if !strings.Contains(log.String(), "blobs by id") {
		t.Errorf("the debug log does not say why: %s", log.String())
	}
}
