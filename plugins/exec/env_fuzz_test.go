package exec

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMatchEnv checks the env allow-list matcher against the same pattern
// compiled as an anchored regular expression (`*` as `.*`, the rest
// literal).
func FuzzMatchEnv(f *testing.F) {
	for _, s := range [][2]string{{"HOME", "HOME"}, {"AWS_*", "AWS_REGION"}, {"*_TOKEN", "GH_TOKEN"}, {"A*B*A", "ABA"}, {"A*A", "A"}, {"*", ""}, {"**", "x"}, {"a*b*c", "abcbc"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			return // regexp reads invalid bytes as U+FFFD
		}
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		want := regexp.MustCompile(`(?s)\A` + strings.Join(parts, ".*") + `\z`).MatchString(name)
		if got := matchEnv(pattern, name); got != want {
			t.Fatalf("matchEnv(%q, %q) = %v, want %v", pattern, name, got, want)
		}
	})
}
