package manifest

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestFindFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  string
	}{
		{"upper", fstest.MapFS{"s/SKILL.md": {}}, "s/SKILL.md"},
		{"lower", fstest.MapFS{"s/skill.md": {}}, "s/skill.md"},
		{"both: SKILL.md, as skills-ref", fstest.MapFS{"s/SKILL.md": {}, "s/skill.md": {}}, "s/SKILL.md"},
		{"neither: SKILL.md, so that Read says none is here", fstest.MapFS{"s/README.md": {}}, "s/SKILL.md"},
		{"a folder named SKILL.md is not it", fstest.MapFS{"s/SKILL.md/x": {}, "s/skill.md": {}}, "s/skill.md"},
		{"other cases are not", fstest.MapFS{"s/Skill.md": {}}, "s/SKILL.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := FindFile(tc.files, "s"); got != tc.want {
				t.Errorf("FindFile = %q, want %q", got, tc.want)
			}
		})
	}
	for name, want := range map[string]bool{"SKILL.md": true, "skill.md": true, "Skill.md": false, "SKILL.MD": false, "x/SKILL.md": false} {
		if IsName(name) != want {
			t.Errorf("IsName(%q) = %v", name, !want)
		}
	}
}

// TestReadOtherCase: validate and link on a folder whose manifest is
// Skill.md name the file and the rename.
func TestReadOtherCase(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"s/Skill.md": {Data: []byte("---\nname: s\ndescription: d\n---\n")}}
	_, err := Read(fsys, FindFile(fsys, "s"), "s/SKILL.md")
	if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "Skill.md is named in the wrong case; rename it to SKILL.md") {
		t.Fatalf("Read = %v; want the rename named", err)
	}
}
