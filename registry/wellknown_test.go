package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/wellknown"
)

// wkSite is a real HTTP server on loopback serving a v0.2 index of
// alpha (a SKILL.md) and beta (a tar.gz with a script).
type wkSite struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
}

func newWKSite(t *testing.T) *wkSite {
	t.Helper()
	s := &wkSite{files: map[string][]byte{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		b, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

// publish serves the index with beta's script printing v, and returns
// the index URL and beta's digest.
func (s *wkSite) publish(t *testing.T, v string) (string, string) {
	t.Helper()
	alpha := []byte(skillMD("alpha"))
	beta, err := wellknown.TarGz([]wellknown.File{
		{Path: "SKILL.md", Data: []byte(skillMD("beta"))},
		{Path: "scripts/run.py", Data: []byte("print('" + v + "')\n"), Mode: 0o755},
	})
	if err != nil {
		t.Fatal(err)
	}
	idx, err := wellknown.Marshal([]wellknown.Entry{
		{Name: "alpha", Type: wellknown.TypeSkillMD, Description: "Alpha.", URL: "alpha/SKILL.md", Digest: wellknown.Digest(alpha)},
		{Name: "beta", Type: wellknown.TypeArchive, Description: "Beta.", URL: "beta.tar.gz", Digest: wellknown.Digest(beta)},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files["/.well-known/agent-skills/alpha/SKILL.md"] = alpha
	s.files["/.well-known/agent-skills/beta.tar.gz"] = beta
	s.files["/.well-known/agent-skills/index.json"] = idx
	return s.URL + "/.well-known/agent-skills/index.json", wellknown.Digest(beta)
}

// TestWellKnownAddLockSyncUpdate: skills added from a well-known index
// are pinned by their digests in the registry and the lock; verify
// passes; sync installs the same into another home; a changed archive is
// a new version for update and a digest the site no longer serves for
// sync.
func TestWellKnownAddLockSyncUpdate(t *testing.T) {
	site := newWKSite(t)
	u, beta1 := site.publish(t, "1")
	ctx := context.Background()
	s := newStore(t)
	if _, err := NewPipeline(s).AddSkills(ctx, mustParse(t, u, true), nil); err != nil {
		t.Fatal(err)
	}
	b, err := s.Get("beta")
	if err != nil {
		t.Fatal(err)
	}
	if b.Source != SourceWellKnown || b.URL != u || b.CommitSHA != beta1 || b.Subdir != "beta" {
		t.Fatalf("beta = source %s url %s commit %s subdir %s; want wellknown %s %s beta", b.Source, b.URL, b.CommitSHA, b.Subdir, u, beta1)
	}
	if c, rec, err := s.Verify(b, true); err != nil || !rec || len(c.Changed)+len(c.Added)+len(c.Removed) != 0 || c.Unnamed {
		t.Fatalf("Verify(beta) = %+v, %v, %v", c, rec, err)
	}
	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	lock, err := NewLock(entries)
	if err != nil {
		t.Fatal(err)
	}
	if le, ok := lock.Find("beta"); !ok || le.Commit != beta1 || le.Source != u {
		t.Fatalf("lock beta = %+v", le)
	}
	data, err := lock.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseLock(data); err != nil {
		t.Fatalf("the lock does not read back: %v", err)
	}

	other := newStore(t)
	if _, err := NewPipeline(other).Sync(ctx, lock, SyncRequest{}, nil); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	ob, err := other.Get("beta")
	if err != nil || ob.DirHash != b.DirHash || ob.CommitSHA != beta1 || ob.Source != SourceWellKnown {
		t.Fatalf("synced beta = %+v, %v; want hash %s", ob, err, b.DirHash)
	}

	_, beta2 := site.publish(t, "2")
	// A local edit is named before it is discarded.
	if err := os.WriteFile(filepath.Join(b.Path, "scripts", "run.py"), []byte("print('edited')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := NewPipeline(s).Update(ctx, UpdateRequest{Names: []string{"alpha", "beta"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		want := StatusUpToDate
		if r.Name == "beta" {
			want = StatusUpdated
			if r.OldSHA != beta1 || r.NewSHA != beta2 {
				t.Errorf("beta updated %s -> %s; want %s -> %s", r.OldSHA, r.NewSHA, beta1, beta2)
			}
			if len(r.LocalEdits) != 1 || r.LocalEdits[0] != "scripts/run.py (modified)" {
				t.Errorf("beta's local edits: %q", r.LocalEdits)
			}
		}
		if r.Status != want {
			t.Errorf("update %s: %s; want %s", r.Name, r.Status, want)
		}
	}

	third := newStore(t)
	if _, err := NewPipeline(third).Sync(ctx, lock, SyncRequest{}, nil); !errors.Is(err, gitsrc.ErrRefNotFound) {
		t.Fatalf("Sync of a digest the site no longer serves = %v; want ErrRefNotFound", err)
	}
}

// TestWellKnownDigestMismatch: an artifact that is not what the index
// says installs nothing.
func TestWellKnownDigestMismatch(t *testing.T) {
	site := newWKSite(t)
	u, _ := site.publish(t, "1")
	site.mu.Lock()
	site.files["/.well-known/agent-skills/alpha/SKILL.md"] = []byte(skillMD("alpha", "allowed-tools: Bash"))
	site.mu.Unlock()
	s := newStore(t)
	if _, err := NewPipeline(s).AddSkills(context.Background(), mustParse(t, u, true), nil); !errors.Is(err, wellknown.ErrDigestMismatch) {
		t.Fatalf("Add = %v; want ErrDigestMismatch", err)
	}
	if entries, _ := s.List(); len(entries) != 0 {
		t.Fatalf("installed %d skills", len(entries))
	}
}

func mustParse(t *testing.T, u string, all bool) AddRequest {
	t.Helper()
	src, err := gitsrc.ParseSource(u)
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != gitsrc.KindWellKnown {
		t.Fatalf("ParseSource(%s).Kind = %d; want KindWellKnown", u, src.Kind)
	}
	return AddRequest{Source: src, All: all, Trusted: true, AgentVersion: "0.5.0"}
}
