package deps

import (
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/manifest"
)

func installed(t *testing.T, name, url, dir, version, requires string) Installed {
	t.Helper()
	r, err := manifest.ParseRequires(requires)
	if err != nil {
		t.Fatal(err)
	}
	return Installed{Name: name, URL: url, Path: dir, Version: version, Requires: r}
}

func TestCheckAndOrphans(t *testing.T) {
	const repo = "https://example.com/o/r.git"
	skills := []Installed{
		installed(t, "release-notes", repo, "skills/release-notes", "1.0.0", repo+"//skills/git-history@^2, "+repo+"//skills/style-guide@^1.2"),
		installed(t, "git-history", repo, "skills/git-history", "2.4.1", repo+"//skills/style-guide@>=1.3"),
		installed(t, "style-guide", "https://example.com/o/r", "skills/style-guide/", "1.9.0", ""),
		installed(t, "changelog", repo, "skills/changelog", "1.0.0", repo+"//skills/git-history@^2"),
		installed(t, "lonely", repo, "skills/lonely", "1.0.0", "https://example.com/x/y//z@*, "+repo+"//skills/style-guide@^2"),
	}
	edges, unmet := Check(skills)
	if got := strings.Join(Requirers(edges, "git-history"), ","); got != "changelog,release-notes" {
		t.Errorf("requirers of git-history = %s", got)
	}
	if got := strings.Join(Requirers(edges, "style-guide"), ","); got != "git-history,lonely,release-notes" {
		t.Errorf("requirers of style-guide = %s (the URL without .git and the path with a slash are the same skill)", got)
	}
	if len(unmet) != 2 || unmet[0].Found != "" || unmet[1].Found != "style-guide" {
		t.Fatalf("unmet = %+v; want lonely's missing x/y and its incompatible style-guide", unmet)
	}
	if s := unmet[1].String(); !strings.Contains(s, "style-guide@^2") || !strings.Contains(s, "1.9.0") {
		t.Errorf("unmet says %q", s)
	}
	// changelog still needs git-history, and lonely style-guide.
	if got := strings.Join(Orphans(edges, "release-notes"), ","); got != "" {
		t.Errorf("orphans of release-notes = %q, want none", got)
	}
	rest := []Installed{skills[0], skills[1], skills[2]}
	edges, _ = Check(rest)
	if got := strings.Join(Orphans(edges, "release-notes"), ","); got != "git-history,style-guide" {
		t.Errorf("orphans of release-notes alone = %q", got)
	}
	if got := strings.Join(Orphans(edges, "git-history"), ","); got != "" {
		t.Errorf("orphans of git-history = %q; release-notes still needs style-guide", got)
	}
}
