package catalog

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/wellknown"
)

// TestWellKnownIndex: the catalog's index lists what it can serve, and the
// fetcher agent skill add uses reads it back with every digest checked.
func TestWellKnownIndex(t *testing.T) {
	srv := newTestServer(t, "")
	resp, body := get(t, srv, "/.well-known/agent-skills/index.json", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, wellknown.SchemaV2) {
		t.Fatalf("index: %d %s", resp.StatusCode, body)
	}
	idx, skipped, err := wellknown.Parse([]byte(body), srv.URL+wellKnownIndex)
	if err != nil || skipped != 0 {
		t.Fatalf("Parse = %v, skipped %d:\n%s", err, skipped, body)
	}
	// stamp has no SKILL.md in the database: it is not listed.
	if len(idx.Skills) != 1 || idx.Skills[0].Name != "pdf" || idx.Skills[0].Type != wellknown.TypeSkillMD {
		t.Fatalf("skills %+v", idx.Skills)
	}
	snap, err := (&wellknown.Fetcher{}).Fetch(context.Background(), gitsrc.FetchRequest{URL: srv.URL + wellKnownIndex})
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(snap.FS, "pdf/SKILL.md")
	if err != nil || !strings.HasPrefix(string(b), "---\nname: pdf\n") || snap.PinOf("pdf") != wellknown.Digest(b) {
		t.Fatalf("pdf/SKILL.md = %q, %v; pin %s", b, err, snap.PinOf("pdf"))
	}
	if resp, _ := get(t, srv, "/.well-known/agent-skills/stamp/SKILL.md", nil); resp.StatusCode != 404 {
		t.Errorf("stamp/SKILL.md: %d", resp.StatusCode)
	}
}
