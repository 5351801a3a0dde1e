package catalog

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// benchCatalog is a catalog of n skills whose names and descriptions are
// drawn from a vocabulary of vocab words: with 120, a two-word query
// matches about 5% of the skills; with 12, about 40%.
func benchCatalog(b *testing.B, n, vocab int) *httptest.Server {
	b.Helper()
	words := []string{"pdf", "forms"}
	for i := len(words); i < vocab; i++ {
		words = append(words, fmt.Sprintf("w%d", i))
	}
	skills := make([]Skill, n)
	for i := range skills {
		name := fmt.Sprintf("%s-%s-%d", words[i%len(words)], words[(i/len(words))%len(words)], i)
		skills[i] = Skill{ID: "https://git.example/team#skills/" + name, Name: name, Source: "https://git.example/team", Kind: KindGit,
			Description: fmt.Sprintf("Works with %s and %s files for team %d.", words[(i*7)%len(words)], words[(i*5)%len(words)], i%97)}
	}
	d, err := Open(filepath.Join(b.TempDir(), "catalog.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	if err := d.Replace(context.Background(), skills, time.Now()); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(Handler(ServerOptions{DB: d}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkSearchAPI10k is one GET /api/search?q=pdf+forms&limit=20 over
// 10,000 indexed skills, through HTTP on loopback (SPEC §20: ≤ 10 ms):
// Typical, the query matching about 5% of them; Broad, about 40%.
func BenchmarkSearchAPI10k(b *testing.B) {
	for _, c := range []struct {
		name  string
		vocab int
	}{{"Typical", 120}, {"Broad", 12}} {
		b.Run(c.name, func(b *testing.B) { benchSearch(b, benchCatalog(b, 10000, c.vocab)) })
	}
}

func benchSearch(b *testing.B, srv *httptest.Server) {
	u := srv.URL + "/api/search?q=pdf+forms&limit=20"
	for b.Loop() {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

// BenchmarkPageFirstLoad10k loads the listing page of 10,000 skills and
// reports its size: the page is one request (inline style and script),
// so this is the whole first load (goal ≤ 100 KB).
func BenchmarkPageFirstLoad10k(b *testing.B) {
	srv := benchCatalog(b, 10000, 120)
	var size int64
	for b.Loop() {
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			b.Fatal(err)
		}
		size, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	b.ReportMetric(float64(size), "bytes/page")
	if size > 100<<10 {
		b.Fatalf("the first load is %d bytes, over 100 KB", size)
	}
}
