package exec

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzScriptEntry resolves an arbitrary SKILL.md scripts entry in a skill
// that holds links out of itself: an accepted entry names a regular .py
// file inside the skill, reached through no link.
func FuzzScriptEntry(f *testing.F) {
	for _, s := range []string{"status", "Status", "tools/run.py", "../x", "/etc/passwd", "scripts/../../x", "link", "linkdir/a", ".hidden", "a\\b", "scripts/", "x.PY", "..", "scripts//status.py"} {
		f.Add(s)
	}
	parent := f.TempDir()
	abs := filepath.Join(parent, "skill")
	writeFiles(f, abs, map[string]string{
		"scripts/status.py": "print(1)\n",
		"tools/run.py":      "print(2)\n",
		"scripts/link.py":   "->../../outside.py",
		"scripts/linkdir":   "->../tools",
		"scripts/dir.py":    "/",
		"../outside.py":     "print(3)\n",
	})
	f.Fuzz(func(t *testing.T, entry string) {
		s, _, err := explicit(abs, entry)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(abs, s.Path)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, "../") || s.Name == "" {
			t.Fatalf("entry %q resolved to %q (name %q) outside the skill", entry, s.Path, s.Name)
		}
		if !strings.HasSuffix(strings.ToLower(s.Path), ".py") {
			t.Fatalf("entry %q resolved to %q, not a .py file", entry, s.Path)
		}
		if err := checkNoLink(abs, filepath.ToSlash(rel)); err != nil {
			t.Fatalf("entry %q resolved to %q: %v", entry, s.Path, err)
		}
	})
}
