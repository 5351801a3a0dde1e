package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

// TestAddTwoSkillsFetchesOnce: two skills of one repository over http
// transfer it once (one pack in the cache), and only the selected folder is
// written.
func TestAddTwoSkillsFetchesOnce(t *testing.T) {
	t.Parallel()
	r := gittest.NewRepo(t, map[string]string{
		"a/SKILL.md": skillMD("a"), "b/SKILL.md": skillMD("b"),
		"other/big.txt": strings.Repeat("y", 1<<16),
	})
	u := gittest.ServeRepo(t, r)
	s := newStore(t)
	ea := mustAdd(t, s, u, func(req *AddRequest) { req.Skill = "a" }, buildPrep)
	mustAdd(t, s, u, func(req *AddRequest) { req.Skill = "b" }, buildPrep)
	packs, _ := filepath.Glob(filepath.Join(s.Home, "cache", "git", "*", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("two adds from one repository wrote %d packs; want 1", len(packs))
	}
	if _, err := os.Stat(filepath.Join(ea.Path, "big.txt")); err == nil {
		t.Fatal("a file outside the skill was installed")
	}
}
