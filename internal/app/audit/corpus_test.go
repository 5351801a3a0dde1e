package audit

import (
	"crypto/sha256"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"
)

// TestPublicCorpus audits every SKILL.md folder under $AUDIT_CORPUS (public
// skill repositories unpacked there, see docs/audit.md) and writes each
// finding as a JSON line to $AUDIT_CORPUS_OUT, for review by hand. Folders
// whose SKILL.md is byte for byte one already read are skipped: collections
// copy each other's skills. Skipped without $AUDIT_CORPUS.
func TestPublicCorpus(t *testing.T) {
	root := os.Getenv("AUDIT_CORPUS")
	if root == "" {
		t.Skip("AUDIT_CORPUS is not set")
	}
	rs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(os.Getenv("AUDIT_CORPUS_OUT"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	enc := json.NewEncoder(out)
	seen := map[[32]byte]bool{}
	var dirs []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "SKILL.md" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	sort.Strings(dirs)
	skills, dup, bad := 0, 0, 0
	perRule := map[string]int{}
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil {
			continue
		}
		h := sha256.Sum256(data)
		if seen[h] {
			dup++
			continue
		}
		seen[h] = true
		m, _, err := gitsrc.LoadManifest(dir)
		if err != nil {
			bad++
			m = nil
		}
		rep, err := rs.Audit(os.DirFS(dir), m)
		if err != nil {
			t.Logf("%s: %v", dir, err)
			continue
		}
		skills++
		rel, _ := filepath.Rel(root, dir)
		for _, f := range rep.Findings {
			perRule[f.Rule]++
			enc.Encode(map[string]any{"skill": rel, "rule": f.Rule, "severity": f.Severity, "file": f.File, "line": f.Line, "message": f.Message, "excerpt": f.Excerpt})
		}
	}
	t.Logf("%d skills audited (%d duplicates skipped, %d manifests unreadable)", skills, dup, bad)
	ids := make([]string, 0, len(perRule))
	for id := range perRule {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t.Logf("%-32s %d", id, perRule[id])
	}
}
