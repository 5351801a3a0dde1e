package registry

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// benchEntries makes n git entries through their registry.json form, so
// the benchmarks do not depend on how Entry groups its fields.
func benchEntries(b *testing.B, s *Store, n int) []Entry {
	b.Helper()
	if err := os.MkdirAll(s.SkillsDir(), 0o755); err != nil {
		b.Fatal(err)
	}
	entries := make([]Entry, n)
	for i := range entries {
		name := fmt.Sprintf("skill-%04d", i)
		line := fmt.Sprintf(`{"name":%q,"canonical":%q,"source":"git","git_url":"https://example.com/org/repo%d.git","commit_sha":"%040d","trusted":true,"path":%q,"description":"A skill that the index benchmarks write, with a description of ordinary length."}`,
			name, name, i, i, s.skillDir(name))
		if err := json.Unmarshal([]byte(line), &entries[i]); err != nil {
			b.Fatal(err)
		}
	}
	return entries
}

// BenchmarkIndexWrite1000 writes skills/.index for 1,000 entries: the
// write every registry change makes next to registry.json, not fsynced.
func BenchmarkIndexWrite1000(b *testing.B) {
	s := NewStore(b.TempDir())
	recs, err := records(benchEntries(b, s, 1000), known{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := s.idx.write(s.SkillsDir(), stamp{1, 2, 3, 4, 5}, recs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRegistryWrite1000 is one registry commit of 1,000 entries:
// registry.json (fsynced, and its folder) and then the index.
func BenchmarkRegistryWrite1000(b *testing.B) {
	s := NewStore(b.TempDir())
	entries := benchEntries(b, s, 1000)
	for b.Loop() {
		if err := s.write(entries); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndexDecode1000 decodes the records of an index of 1,000
// entries that each have a listing and a plugin tool, as every listing
// command does once (its read is BenchmarkIndexWrite1000's file).
func BenchmarkIndexDecode1000(b *testing.B) {
	s := NewStore(b.TempDir())
	entries := benchEntries(b, s, 1000)
	for i := range entries {
		e := &entries[i]
		e.Tools = []Tool{{Name: "convert_table", Description: "Convert a table of data into a chart.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
		e.Listing = &Listing{Fingerprint: "2233:1795954778024726892:123456", Runnable: []string{"chart.py", "summary.py"}}
		e.Listing.Manifest.Scripts = []string{"scripts/*.py"}
	}
	recs, err := records(entries, known{})
	if err != nil {
		b.Fatal(err)
	}
	st := stamp{1, 2, 3, 4, 5}
	if err := s.idx.write(s.SkillsDir(), st, recs); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(s.idx.path(s.SkillsDir()))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, _, ok := decodeHead(data, st); !ok {
			b.Fatal("index does not decode")
		}
	}
}
