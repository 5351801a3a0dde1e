package plugbuild

import (
	"path/filepath"
	"testing"
)

// FuzzPackage: whatever plugin.build says, an accepted path stays inside
// the skill.
func FuzzPackage(f *testing.F) {
	for _, s := range []string{"./plugin", "plugin", "cmd/tool/", "../x", "/abs", "a/../../b", ".", "", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := Package(rel)
		if err != nil {
			return
		}
		if !filepath.IsLocal(got) {
			t.Fatalf("Package(%q) = %q, not local", rel, got)
		}
		skill := "/skill"
		if p := filepath.Join(skill, got); p != skill && !isUnder(skill, p) {
			t.Fatalf("Package(%q) = %q leaves the skill", rel, got)
		}
	})
}

func isUnder(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(r)
}
