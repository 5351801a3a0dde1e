package envfilter

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"OPENAI_API_KEY", "sk-x", true},
		{"ANTHROPIC_API_KEY", "x", true},
		{"openai_api_key", "x", true},
		{"GH_TOKEN", "x", true},
		{"GITHUB_TOKEN", "x", true},
		{"AWS_SECRET_ACCESS_KEY", "x", true},
		{"DB_PASSWORD", "x", true},
		{"MYSQL_PASSWD", "x", true},
		{"PWD", "/home/me", true},
		{"OLDPWD", "/home", false}, // one segment, OLDPWD: not PWD
		{"AZURE_CREDENTIALS", "x", true},
		{"SSH_AUTH_SOCK", "/tmp/ssh", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true},
		{"KEYBOARD", "us", false},
		{"TOKENIZERS_PARALLELISM", "false", false},
		{"KEYBOARD_LAYOUT", "us", false},
		{"PATH", "/usr/bin", false},
		{"HOME", "/root", false},
		{"SECRETARY", "x", false},
		{"HTTPS_PROXY", "http://user:hunter2@proxy:3128", true},
		{"HTTPS_PROXY", "http://proxy:3128", false},
		{"HTTPS_PROXY", "http://user@proxy:3128", false},
		{"DATABASE_URL", "postgres://app:pw@db/app?sslmode=off", true},
		{"PIP_EXTRA_INDEX_URL", "https://pypi.org/simple https://me:tok@pkgs.example/simple", true},
		{"NOTE", "see https://example.com/a:b@c", false},
		{"WEIRD", "x=http://u:p@h", true},
		{"BROKEN", "http://u:p@[::1", true},
	} {
		if got := Secret(tc.name, tc.value); got != tc.want {
			t.Errorf("Secret(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"HELLO_*", "HELLO_X", true},
		{"HELLO_*", "HELLO_", true},
		{"HELLO_*", "XHELLO_", false},
		{"*", "ANY", true},
		{"A*B*C", "AXBYC", true},
		{"A*B*C", "ABC", true},
		{"A*A", "A", false},
		{"A?", "AB", false},
		{"A?", "A?", true},
		{"[A]", "A", false},
		{"A", "AB", false}, {"*", "", true}, {"MY_*", "MY", false}, {"*_KEY", "API_KEY", true}, {"*_KEY", "_KE", false},
		{"A*B*C", "AC", false}, {"A*A", "AA", true}, {"my_*", "MY_X", false},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

func TestPolicyFilter(t *testing.T) {
	t.Parallel()
	environ := []string{
		"PATH=/bin", "HOME=/h", "OPENAI_API_KEY=sk", "HELLO_TOKEN=t", "HELLO_NAME=n",
		"KEYBOARD=us", "TOKENIZERS_PARALLELISM=false", "GH_TOKEN=g", "=odd", "noequals",
		"PROXY=http://u:p@h",
	}
	base := []string{"PATH", "HOME"}
	for _, tc := range []struct {
		name string
		p    Policy
		want []string
	}{
		{"base only", Policy{Base: base}, []string{"PATH=/bin", "HOME=/h"}},
		{"pattern admits no secret", Policy{Base: base, Allow: []string{"HELLO_*"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n"}},
		{"whole name admits a secret", Policy{Base: base, Allow: []string{"HELLO_*", "HELLO_TOKEN"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_TOKEN=t", "HELLO_NAME=n"}},
		{"star admits no secret", Policy{Allow: []string{"*"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false"}},
		{"pass needs the skill to ask", Policy{Base: base, Pass: []string{"GH_TOKEN"}}, []string{"PATH=/bin", "HOME=/h"}},
		{"pass with a pattern", Policy{Base: base, Allow: []string{"GH_*"}, Pass: []string{"GH_TOKEN"}}, []string{"PATH=/bin", "HOME=/h", "GH_TOKEN=g"}},
		{"all less secrets", Policy{All: true}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false"}},
		{"all with pass", Policy{All: true, Pass: []string{"GH_TOKEN", "PROXY"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false", "GH_TOKEN=g", "PROXY=http://u:p@h"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Filter(environ); !slices.Equal(got, tc.want) {
				t.Errorf("Filter = %q\nwant     %q", got, tc.want)
			}
		})
	}
}

func FuzzSecret(f *testing.F) {
	for _, s := range []string{"http://u:p@h", "https://a https://u:p@b/c", "x=ftp://u:@h", "http://[::1", "://", "a://b:c@"} {
		f.Add("NAME", s)
	}
	f.Add("OPENAI_API_KEY", "")
	f.Fuzz(func(t *testing.T, name, value string) {
		s := Secret(name, value)
		// A value without "://" holds no URL, so only the name decides.
		if !containsURL(value) && s != Secret(name, "") {
			t.Fatalf("Secret(%q, %q) = %v differs from the name alone", name, value, s)
		}
		// A secret name is a secret whatever the value.
		if Secret(name, "") && !s {
			t.Fatalf("Secret(%q, %q) = false for a secret name", name, value)
		}
	})
}

func containsURL(s string) bool {
	for i := 0; i+3 <= len(s); i++ {
		if s[i:i+3] == "://" {
			return true
		}
	}
	return false
}

// FuzzMatch checks the permissions.env matcher against the same pattern
// compiled as an anchored regular expression (`*` as `.*`, the rest
// literal).
func FuzzMatch(f *testing.F) {
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
		if got := Match(pattern, name); got != want {
			t.Fatalf("Match(%q, %q) = %v, want %v", pattern, name, got, want)
		}
	})
}
