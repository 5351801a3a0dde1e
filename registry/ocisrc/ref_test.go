package ocisrc

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		want     Reference
		err      string
	}{
		{"tag", "oci://127.0.0.1:5000/team/hello:1.0.0", Reference{Host: "127.0.0.1:5000", Repository: "team/hello", Tag: "1.0.0"}, ""},
		{"digest", "oci://ghcr.io/o/r@sha256:" + strings.Repeat("a", 64), Reference{Host: "ghcr.io", Repository: "o/r", Digest: "sha256:" + strings.Repeat("a", 64)}, ""},
		{"tag and digest", "oci://ghcr.io/o/r:v1@sha256:" + strings.Repeat("b", 64), Reference{Host: "ghcr.io", Repository: "o/r", Tag: "v1", Digest: "sha256:" + strings.Repeat("b", 64)}, ""},
		{"constraint", "oci://ghcr.io/o/r@^1.2", Reference{Host: "ghcr.io", Repository: "o/r", Constraint: "^1.2"}, ""},
		{"bare", "oci://localhost:5000/r", Reference{Host: "localhost:5000", Repository: "r"}, ""},
		{"no scheme", "ghcr.io/o/r:1", Reference{}, "must start with oci://"},
		{"upper case repo", "oci://ghcr.io/O/R:1", Reference{}, "invalid"},
		{"bad constraint", "oci://ghcr.io/o/r@!!", Reference{}, "neither a digest"},
		{"other digest", "oci://ghcr.io/o/r@sha512:" + strings.Repeat("a", 128), Reference{}, "only sha256"},
		{"tag with plus", "oci://ghcr.io/o/r:1.0.0+b", Reference{Host: "ghcr.io", Repository: "o/r", Tag: "1.0.0_b"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.err != "" {
				if err == nil || !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) = %+v, %v; want an ErrReference saying %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
			if back, err := Parse(got.String()); err != nil || back != got {
				t.Fatalf("Parse(String()) = %+v, %v; want %+v", back, err, got)
			}
		})
	}
}

func TestTagVersion(t *testing.T) {
	for _, v := range []string{"1.0.0", "1.2.3+build.5", "2.0.0-rc.1+x.y"} {
		tag := TagFor(v)
		if strings.Contains(tag, "+") {
			t.Errorf("TagFor(%s) = %s holds a +", v, tag)
		}
		if got := VersionOf(tag); got == nil || got.Original() != v {
			t.Errorf("VersionOf(TagFor(%s)) = %v", v, got)
		}
	}
	if VersionOf("latest") != nil {
		t.Error("latest is not a version")
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:5000": true, "localhost": true, "[::1]:80": true, "127.1.2.3": true,
		"ghcr.io": false, "10.0.0.1:5000": false, "localhost.evil.com": false,
	} {
		if got := Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v", host, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"oci://h/r:t", "oci://h:1/a/b@sha256:" + strings.Repeat("0", 64), "oci://h/r@^1", "oci://", "oci://h/r@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrReference) {
				t.Fatalf("Parse(%q): %v is not an ErrReference", s, err)
			}
			return
		}
		back, err := Parse(r.String())
		if err != nil || back != r {
			t.Fatalf("Parse(%q) = %+v; Parse(String()) = %+v, %v", s, r, back, err)
		}
	})
}
