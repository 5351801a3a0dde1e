package registry

import (
	"strings"
	"testing"

	"github.com/agentskills/agent/registry/gitsrc"
)

func TestMirrorRef(t *testing.T) {
	sha := strings.Repeat("ab", 20)
	tests := []struct {
		name, prefix, src, path, want string
	}{
		{"github", "oci://reg.example/mirror", "https://github.com/Acme/Skills.git", "skills/.curated/Weather", "oci://reg.example/mirror/github-com/acme/skills/skills/curated/weather:" + sha},
		{"root skill", "oci://127.0.0.1:5000/m", "http://127.0.0.1:8080/hello", "", "oci://127.0.0.1:5000/m/127-0-0-1-8080/hello:" + sha},
		{"scp", "oci://reg.example/m", "git@github.com:o/r.git", "a_b", "oci://reg.example/m/github-com/o/r/a-b:" + sha},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := MirrorRef(tc.prefix, tc.src, tc.path, sha)
			if err != nil || ref.String() != tc.want {
				t.Fatalf("MirrorRef = %s, %v; want %s", ref, err, tc.want)
			}
		})
	}
}

func TestParseSourceOCI(t *testing.T) {
	d := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		in                   string
		url, ref, constraint string
	}{
		{"oci://127.0.0.1:5000/team/hello:1.0.0", "oci://127.0.0.1:5000/team/hello", "1.0.0", ""},
		{"oci://127.0.0.1:5000/team/hello@" + d, "oci://127.0.0.1:5000/team/hello", d, ""},
		{"oci://127.0.0.1:5000/team/hello@^1.2", "oci://127.0.0.1:5000/team/hello", "", "^1.2"},
	}
	for _, tc := range tests {
		src, err := gitsrc.ParseSource(tc.in)
		if err != nil || src.URL != tc.url || src.Ref != tc.ref || src.Constraint != tc.constraint {
			t.Errorf("ParseSource(%q) = %+v, %v", tc.in, src, err)
		}
		if err := gitsrc.CheckCloneURL(src.URL); err != nil {
			t.Errorf("gitsrc.CheckCloneURL(%q): %v", src.URL, err)
		}
	}
	if _, err := gitsrc.ParseSource("oci://Bad/Repo:1"); err == nil {
		t.Error("an invalid oci:// reference was accepted")
	}
}
