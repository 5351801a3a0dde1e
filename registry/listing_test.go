package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentskills/agent/registry/manifest"
)

// TestIndexedAll: the batch check (on several threads for a long list)
// says what Indexed says of each entry: a SKILL.md changed, removed or
// replaced after install is not indexed, a linked skill outside skills/ is
// checked by its path, and an entry want does not pick is left out.
func TestIndexedAll(t *testing.T) {
	home := t.TempDir()
	store := NewStore(home)
	write := func(dir, text string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, manifest.ManifestFile), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(dir, name string) Entry {
		t.Helper()
		write(dir, fmt.Sprintf("---\nname: %s\ndescription: d\n---\n", name))
		l, err := NewListing(dir, &manifest.Manifest{Name: name, Description: "d"}, nil, []string{})
		if err != nil {
			t.Fatal(err)
		}
		return Entry{Name: name, Canonical: name, Description: "d", Path: dir, Listing: l}
	}
	var all []Entry
	for i := range 3 * minPerWorker {
		name := fmt.Sprintf("s%03d", i)
		all = append(all, entry(filepath.Join(store.SkillsDir(), name), name))
	}
	linked := entry(filepath.Join(t.TempDir(), "linked"), "linked")
	all = append(all, linked)
	changed, removed, replaced, unlisted, skipped := 5, 200, 300, 310, 320
	write(all[changed].Path, "---\nname: s005\ndescription: changed after install\n---\n")
	if err := os.Remove(filepath.Join(all[removed].Path, manifest.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(all[replaced].Path, manifest.ManifestFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(all[replaced].Path, manifest.ManifestFile), 0o755); err != nil {
		t.Fatal(err)
	}
	all[unlisted].Listing = nil

	l := store.Listings()
	defer l.Close()
	got := l.IndexedAll(all, func(i int) bool { return i != skipped })
	for i := range all {
		want, ok := all[i].Indexed()
		if i == skipped {
			want, ok = nil, false
		}
		if ok != (got[i] != nil) || !reflect.DeepEqual(got[i], want) {
			t.Errorf("entry %d (%s): IndexedAll = %+v, Indexed = %+v, %v", i, all[i].Name, got[i], want, ok)
		}
		shouldIndex := i != changed && i != removed && i != replaced && i != unlisted && i != skipped
		if shouldIndex != (got[i] != nil) {
			t.Errorf("entry %d (%s): indexed = %v, want %v", i, all[i].Name, got[i] != nil, shouldIndex)
		}
	}
}

// TestIndexedWithoutFolder: a bundled skill lists from its listing as it
// is (it has no folder to check); any other entry without a folder never
// lists from one.
func TestIndexedWithoutFolder(t *testing.T) {
	t.Parallel()
	l := ListingOf(&manifest.Manifest{Name: "b", Description: "d"}, nil, []string{})
	for _, tc := range []struct {
		name   string
		source string
		want   bool
	}{
		{"bundled", SourceBundled, true},
		{"installed", "git", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Entry{Name: "b", Canonical: "b", Description: "d", Listing: l, Origin: Origin{Source: tc.source}}
			m, ok := e.Indexed()
			if ok != tc.want || ok && m.Description != "d" {
				t.Fatalf("Indexed() = %v, %v; want ok %v", m, ok, tc.want)
			}
			all := []Entry{e}
			ls := NewStore(t.TempDir()).Listings()
			defer ls.Close()
			if got := ls.IndexedAll(all, nil)[0]; (got != nil) != tc.want {
				t.Fatalf("IndexedAll = %v, want listed %v", got, tc.want)
			}
		})
	}
}
