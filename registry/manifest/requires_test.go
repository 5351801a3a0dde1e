package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestParseRequires(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Requirement
		err  string // part of the error; "" means none
	}{
		{name: "empty", in: "  "},
		{name: "owner repo with path", in: "owner/repo//skills/style-guide@^1.2",
			want: []Requirement{{Source: "owner/repo", Path: "skills/style-guide", Constraint: "^1.2"}}},
		{name: "oci without path", in: "oci://host/skills/git-history@^2",
			want: []Requirement{{Source: "oci://host/skills/git-history", Constraint: "^2"}}},
		{name: "local path any version", in: "./local/path@*",
			want: []Requirement{{Source: "./local/path", Constraint: "*"}}},
		{name: "https url with path", in: "https://example.com/o/r.git//skills/a@~1.0",
			want: []Requirement{{Source: "https://example.com/o/r.git", Path: "skills/a", Constraint: "~1.0"}}},
		{name: "several with spaces and AND", in: "o/r//a@^1 , oci://h/b@>=1.2 <3,  ../c@*",
			want: []Requirement{
				{Source: "o/r", Path: "a", Constraint: "^1"},
				{Source: "oci://h/b", Constraint: ">=1.2 <3"},
				{Source: "../c", Constraint: "*"},
			}},
		{name: "file url with path", in: "file:///srv/repo//skills/x@1.0.0",
			want: []Requirement{{Source: "file:///srv/repo", Path: "skills/x", Constraint: "1.0.0"}}},
		{name: "no constraint", in: "o/r//a", err: "no @constraint"},
		{name: "empty constraint", in: "o/r//a@", err: "constraint after @ is empty"},
		{name: "bad constraint", in: "o/r//a@banana", err: "not a semver constraint"},
		{name: "constraint before path", in: "o/r@^1//skills/a", err: "the constraint comes last"},
		{name: "empty path", in: "o/r//@^1", err: "skill path after // is empty"},
		{name: "path escapes", in: "o/r//../../etc@^1", err: "leaves the source"},
		{name: "empty source", in: "//skills/a@^1", err: "source is empty"},
		{name: "empty entry", in: "o/r//a@^1,,o/r//b@^1", err: "entry 2 is empty"},
		{name: "trailing comma", in: "o/r//a@^1,", err: "entry 2 is empty"},
		{name: "duplicate", in: "o/r//a@^1, o/r//a@^2", err: "same skill"},
		{name: "transport helper", in: "ext::sh -c x@^1", err: "remote helper"},
		{name: "transport helper before url", in: "ext::https://h/r@^1", err: "remote helper"},
		{name: "space in source", in: "o/r o/s@^1", err: "contains a space"},
		{name: "control character", in: "o/r\x00//a@^1", err: "control characters"},
		{name: "scheme only", in: "oci://@^1", err: "scheme and no address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRequires(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrInvalidRequires) {
					t.Fatalf("ParseRequires(%q) = %v, %v; want an ErrInvalidRequires containing %q", tt.in, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRequires(%q): %v", tt.in, err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("ParseRequires(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestRequiresInManifest checks that the parser reads agent.requires as a
// metadata string, reports a bad one at its line, and that the key keeps
// the manifest spec-clean.
func TestRequiresInManifest(t *testing.T) {
	good := "---\nname: release-notes\ndescription: Writes release notes.\nmetadata:\n  agent.requires: \"o/r//skills/git-history@^2, o/r//skills/style-guide@^1.2\"\n---\nbody\n"
	m, probs, err := ParseManifest("release-notes/SKILL.md", []byte(good))
	if err != nil {
		t.Fatalf("ParseManifest: %v %v", err, probs)
	}
	reqs, err := m.Requires()
	if err != nil || len(reqs) != 2 || reqs[1].Path != "skills/style-guide" {
		t.Fatalf("Requires() = %+v, %v", reqs, err)
	}
	if sp := CheckStrict("release-notes/SKILL.md", "release-notes", m, probs); len(sp) != 0 {
		t.Errorf("CheckStrict reports %v; agent.requires is a metadata string and must stay spec-clean", sp)
	}
	bad := strings.Replace(good, "@^1.2", "", 1)
	_, _, err = ParseManifest("release-notes/SKILL.md", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "no @constraint") || !strings.Contains(err.Error(), "5") {
		t.Fatalf("ParseManifest of a bad agent.requires = %v; want an error at line 5 saying the constraint is missing", err)
	}
}

func FuzzParseRequires(f *testing.F) {
	for _, s := range []string{
		"owner/repo//skills/style-guide@^1.2",
		"oci://host/skills/git-history@^2, ./local/path@*",
		"https://h/o/r.git//a/b@>=1 <3",
		"o/r//../x@^1", "o/r@", "@", "//@*", ",", "a@b@c",
		"0//0 /@0", // found by the fuzzer: a path ending in " /"
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reqs, err := ParseRequires(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidRequires) {
				t.Fatalf("error %v does not wrap ErrInvalidRequires", err)
			}
			return
		}
		var parts []string
		for _, r := range reqs {
			if r.Source == "" || r.Constraint == "" {
				t.Fatalf("ParseRequires(%q) gave an empty source or constraint: %+v", s, r)
			}
			if r.Path != "" && !InsideRel(r.Path) {
				t.Fatalf("ParseRequires(%q) gave a path leaving its source: %q", s, r.Path)
			}
			parts = append(parts, r.String())
		}
		// What String writes parses back to the same requirements.
		again, err := ParseRequires(strings.Join(parts, ","))
		if err != nil {
			t.Fatalf("round trip of %q via %q: %v", s, strings.Join(parts, ","), err)
		}
		if len(again) != len(reqs) {
			t.Fatalf("round trip of %q: %+v, then %+v", s, reqs, again)
		}
		for i := range again {
			if again[i] != reqs[i] {
				t.Fatalf("round trip of %q: %+v, then %+v", s, reqs[i], again[i])
			}
		}
	})
}
