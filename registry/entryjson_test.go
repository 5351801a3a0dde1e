package registry

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// registryFixture is a registry.json that main wrote at d707260, before
// Entry's fields were grouped: one entry with every field set, a linked
// one and a minimal one. Its AGENT_HOME was fixtureHome.
const (
	registryFixture = "testdata/registry-d707260.json"
	fixtureHome     = "/tmp/entry-fixture-home/AGENT_HOME"
)

// fixtureKeys are the keys Entry had at d707260; the fixture's first entry
// sets all of them.
var fixtureKeys = []string{"name", "canonical", "source", "git_url", "ref", "constraint", "version", "commit_sha",
	"trusted", "installed_at", "updated_at", "path", "subdir", "description", "plugin", "manifest_sha256",
	"dir_hash", "tools", "previous_sha", "stamp", "previous_dir_hash", "named_only", "listing"}

// TestRegistryJSONRoundTrips reads a registry.json written before the
// grouping and writes it back, through the store's slow read (encoding/json),
// then through its index: both writes must give the file byte for byte.
func TestRegistryJSONRoundTrips(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(registryFixture)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	want := bytes.ReplaceAll(raw, []byte(fixtureHome), []byte(home))

	var first map[string]json.RawMessage
	line := bytes.SplitN(want, []byte("\n    "), 3)[1]
	if err := json.Unmarshal(bytes.TrimSuffix(line, []byte(",")), &first); err != nil {
		t.Fatal(err)
	}
	for _, k := range fixtureKeys {
		if _, ok := first[k]; !ok {
			t.Fatalf("the fixture's first entry lacks %q: it must set every field", k)
		}
	}

	if err := os.MkdirAll(filepath.Join(home, "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := NewStore(home)
	if err := os.WriteFile(s.RegistryPath(), want, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, via := range []string{"registry.json", "the index"} {
		if via == "the index" {
			if _, err := os.Stat(s.idx.path(s.SkillsDir())); err != nil {
				t.Fatalf("no index after the first write: %v", err)
			}
			s = NewStore(home) // nothing remembered: read the index from disk
		} else {
			os.Remove(s.idx.path(s.SkillsDir()))
		}
		var entries []Entry
		// Rewriting unchanged entries must not reuse the lines read: re-encode.
		s.idx.lines = known{}
		if err := s.Edit(func(es []Entry) ([]Entry, error) { entries = es; return slices.Clone(es), nil }); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(s.RegistryPath())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read from %s and written back, registry.json differs:\ngot  %s\nwant %s", via, got, want)
		}
		// Each entry alone, as `--json` listings print it, is its line.
		lines := strings.Split(string(want), "\n    ")[1:]
		for i, e := range entries {
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if line, _, _ := strings.Cut(lines[i], "\n"); strings.TrimSuffix(line, ",") != string(b) {
				t.Fatalf("json.Marshal(entry %d) = %s\nits registry.json line is %s", i, b, line)
			}
		}
	}
}

// TestEntryJSONKeepsEveryField sets every field of an Entry, the grouped
// ones included, and requires each to survive registry.json: a field
// added to Entry but not to entryJSON would be lost on the next write.
func TestEntryJSONKeepsEveryField(t *testing.T) {
	t.Parallel()
	var e Entry
	n := 0
	fill(reflect.ValueOf(&e).Elem(), &n)
	listedOnly(e.Listing, &e)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back Entry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, e) {
		for _, f := range reflect.VisibleFields(reflect.TypeFor[Entry]()) {
			if f.Anonymous {
				continue
			}
			if !reflect.DeepEqual(reflect.ValueOf(back).FieldByIndex(f.Index).Interface(), reflect.ValueOf(e).FieldByIndex(f.Index).Interface()) {
				t.Errorf("Entry.%s does not survive registry.json; add it to entryJSON and Entry.wire (entryjson.go)", f.Name)
			}
		}
		t.Fatalf("round trip lost fields:\n%s", b)
	}
}
