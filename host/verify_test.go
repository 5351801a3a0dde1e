package host

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveFingerprints: removing a skill drops the records of binaries
// inside its folders and keeps every other record.
func TestRemoveFingerprints(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	v := newVerifier(state)
	sum := "0000000000000000000000000000000000000000000000000000000000000000"
	skill, other := filepath.Join(t.TempDir(), "skill"), filepath.Join(t.TempDir(), "other")
	for _, p := range []string{filepath.Join(skill, "bin", "tool"), filepath.Join(other, "tool"), skill + "-sibling/tool"} {
		v.store(fingerprint{Path: p, SHA256: sum})
	}
	if err := RemoveFingerprints(state, skill); err != nil {
		t.Fatal(err)
	}
	fresh := newVerifier(state)
	for p, want := range map[string]bool{
		filepath.Join(skill, "bin", "tool"): false,
		filepath.Join(other, "tool"):        true,
		skill + "-sibling/tool":             true,
	} {
		if _, ok := fresh.lookup(p); ok != want {
			t.Errorf("record of %s kept = %v; want %v", p, ok, want)
		}
	}
	if err := RemoveFingerprints(filepath.Join(state, "missing")); err != nil {
		t.Fatalf("no state folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "fingerprints")); err != nil {
		t.Fatal(err)
	}
}
