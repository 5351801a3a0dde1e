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
		// By name: segments.
		{"OPENAI_API_KEY", "x", true},
		{"ANTHROPIC_API_KEY", "x", true},
		{"openai_api_key", "x", true},
		{"GH_TOKEN", "x", true},
		{"GITHUB_TOKEN", "x", true},
		{"GITHUB_PAT", "x", true},
		{"DB_DSN", "x", true},
		{"SSH_AUTH_SOCK", "/tmp/ssh", true},
		{"NPM_AUTH", "x", true},
		{"SLACK_WEBHOOK_URL", "https://hooks.slack.example/services/T0/B0/x", true},
		{"PWD", "/home/me", true},
		// By name: substrings.
		{"PGPASSWORD", "x", true},
		{"MYSQL_PWD_FILE", "x", true},
		{"DB_PASSWORD", "x", true},
		{"MYSQL_PASSWD", "x", true},
		{"OPENAIAPIKEY", "x", true},
		{"openaiApiKey", "x", true},
		{"AWS_SECRET_ACCESS_KEY", "x", true},
		{"CLIENTSECRET", "x", true},
		{"AZURE_CREDENTIALS", "x", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", "/k.json", true},
		{"GIT_PRIVATE_KEY", "x", true},
		{"SECRETARY", "x", true}, // SECRET anywhere: the price of catching CLIENTSECRET
		// Controls: a secret word inside another word, or no secret word.
		{"OLDPWD", "/home", false},
		{"KEYBOARD", "us", false},
		{"KEYBOARD_LAYOUT", "us", false},
		{"MONKEY", "x", false},
		{"TOKENIZERS_PARALLELISM", "false", false},
		{"PATH", "/usr/bin:/opt/sk-tools-0123456789abcdefghij/bin", false},
		{"PATCH_LEVEL", "2", false},
		{"AUTHOR", "me", false},
		{"DSNAME", "x", false},
		{"HOME", "/root", false},
		{"LANG", "sk_SK.UTF-8", false},
		{"LS_COLORS", "rs=0:di=01;34:ln=01;36:ow=34;42", false},
		// By value: a URL with a password.
		{"HTTPS_PROXY", "http://user:hunter2@proxy:3128", true},
		{"HTTPS_PROXY", "http://proxy:3128", false},
		{"HTTPS_PROXY", "http://user@proxy:3128", false},
		{"DATABASE_URL", "postgres://app:pw@db/app?sslmode=off", true},
		{"PIP_EXTRA_INDEX_URL", "https://pypi.org/simple https://me:tok@pkgs.example/simple", true},
		{"NOTE", "see https://example.com/a:b@c", false},
		{"WEIRD", "x=http://u:p@h", true},
		{"BROKEN", "http://u:p@[::1", true},
		// By value: a connection string's password field.
		{"DB_DSN", `host=db user=app password=s3cret dbname=app`, true},
		{"PGCONN", `host=db user=app password=s3cret dbname=app`, true},
		{"PGCONN", `host=db user=app password = s3cret`, true},
		{"MSSQL", "Server=db;Database=app;User Id=sa;Password=s3cret;", true},
		{"ODBC", "DRIVER={x};SERVER=db;UID=sa;PWD=s3cret", true},
		{"PGCONN", "host=db sslpassword=x", true},
		{"PGCONN", "host=db user=app", false},
		{"ODBC", "UID=sa;PWD=;", false},
		{"NOTE", "mypwd=x", false},
		{"NOTE", "the password is in the vault", false},
		// By value: tokens of well-known services.
		{"GIT_ASKPASS_VALUE", "ghp_0123456789abcdefghijABCDEFGHIJ012345", true},
		{"X", "gho_0123456789abcdefghijABCDEFGHIJ012345", true},
		{"X", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", true},
		{"X", "sk-proj-0123456789abcdefghijklmnopqrstuvwxyz", true},
		{"X", "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz", true},
		{"X", "xoxb-1234567890-1234567890123-abcdefghijklmnopqrstuvwx", true},
		{"X", "xoxp-1234567890-1234567890123-abcdefghijklmnopqrstuvwx", true},
		{"X", "xoxe-1-abcdefghijklmnop", true},
		{"X", "AKIAIOSFODNN7EXAMPLE", true},
		{"X", "glpat-0123456789abcdefghij", true},
		{"X", "hf_0123456789abcdefghijABCDEFGHIJ01", true},
		{"GIT_CONFIG_VALUE_0", "AUTHORIZATION: bearer ghp_0123456789abcdefghijABCDEFGHIJ012345", true},
		{"X", `{"token":"glpat-0123456789abcdefghij"}`, true},
		{"X", "ghp_short", false},
		{"X", "sk-learn-and-some-other-words-here", false},
		{"X", "AKIA is an AWS prefix", false},
		{"X", "AKIAIOSFODNN7EXAMPLEx", false}, // lower case: not an access key ID
		{"X", "/opt/ghp_0123456789abcdefghijABCDEFGHIJ012345", false},
		{"X", "mask-0123456789abcdefghijklmnopqrstuvwxyz", false},
		{"X", "xoxo-0123456789abcdefghij", false},
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
		"PROXY=http://u:p@h", "PGPASSWORD=pg", "GITHUB_PAT=pat", "OPENAIAPIKEY=k",
		"DB_DSN=host=db password=pw", "SLACK_WEBHOOK_URL=https://hooks.example/T0/x",
		"SOME_URL=host=db password=pw", "LANG=C.UTF-8",
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
		{"star admits no secret", Policy{Allow: []string{"*"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false", "LANG=C.UTF-8"}},
		{"star and whole names", Policy{Allow: []string{"*", "PGPASSWORD", "GITHUB_PAT", "OPENAIAPIKEY", "DB_DSN", "SLACK_WEBHOOK_URL", "SOME_URL"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false", "PGPASSWORD=pg", "GITHUB_PAT=pat", "OPENAIAPIKEY=k", "DB_DSN=host=db password=pw", "SLACK_WEBHOOK_URL=https://hooks.example/T0/x", "SOME_URL=host=db password=pw", "LANG=C.UTF-8"}},
		{"pass needs the skill to ask", Policy{Base: base, Pass: []string{"GH_TOKEN"}}, []string{"PATH=/bin", "HOME=/h"}},
		{"pass with a pattern", Policy{Base: base, Allow: []string{"GH_*"}, Pass: []string{"GH_TOKEN"}}, []string{"PATH=/bin", "HOME=/h", "GH_TOKEN=g"}},
		{"all less secrets", Policy{All: true}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false", "LANG=C.UTF-8"}},
		{"all with pass", Policy{All: true, Pass: []string{"GH_TOKEN", "PROXY"}}, []string{"PATH=/bin", "HOME=/h", "HELLO_NAME=n", "KEYBOARD=us", "TOKENIZERS_PARALLELISM=false", "GH_TOKEN=g", "PROXY=http://u:p@h", "LANG=C.UTF-8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.Filter(environ); !slices.Equal(got, tc.want) {
				t.Errorf("Filter = %q\nwant     %q", got, tc.want)
			}
		})
	}
}

func FuzzSecret(f *testing.F) {
	for _, s := range []string{"http://u:p@h", "https://a https://u:p@b/c", "x=ftp://u:@h", "http://[::1", "://", "a://b:c@",
		"host=db password=x", "Server=s;Pwd=x", "PWD=;", "ghp_0123456789abcdefghij", "xoxb-0123456789ab", "AKIAIOSFODNN7EXAMPLE", "sk-0123456789abcdefghij"} {
		f.Add("NAME", s)
	}
	f.Add("OPENAI_API_KEY", "")
	f.Fuzz(func(t *testing.T, name, value string) {
		s := Secret(name, value)
		// A secret name is a secret whatever the value.
		if Secret(name, "") && !s {
			t.Fatalf("Secret(%q, %q) = false for a secret name", name, value)
		}
		// A secret value stays one inside a longer value: among other
		// words, or quoted.
		if SecretValue(value) {
			for _, wrapped := range []string{"a " + value + " b", `"` + value + `"`, "x=" + value} {
				if !SecretValue(wrapped) {
					t.Fatalf("SecretValue(%q) = true but SecretValue(%q) = false", value, wrapped)
				}
			}
		}
		// A value with no URL, no '=' and no word of a token prefix holds
		// no secret.
		if !strings.Contains(value, "://") && !strings.Contains(value, "=") && !hasPrefixWord(value) && SecretValue(value) {
			t.Fatalf("SecretValue(%q) = true without a URL, a field or a token prefix", value)
		}
	})
}

// TestTokenStarts keeps the quick test of isToken in step with
// tokenPrefixes.
func TestTokenStarts(t *testing.T) {
	t.Parallel()
	for _, p := range tokenPrefixes {
		if !strings.Contains(tokenStarts, p.prefix[:1]) {
			t.Errorf("tokenStarts lacks %q, the start of %s", p.prefix[:1], p.prefix)
		}
		n := len(p.prefix) + p.min
		if p.prefix == "xox" {
			n += 2
		}
		if n < minToken {
			t.Errorf("%s allows tokens of %d bytes, shorter than minToken %d", p.prefix, n, minToken)
		}
	}
}

func hasPrefixWord(s string) bool {
	for _, p := range tokenPrefixes {
		if strings.Contains(s, p.prefix) {
			return true
		}
	}
	return false
}

// BenchmarkFilter is the cost of filtering a typical environment, which
// every plugin start and every script run pays.
func BenchmarkFilter(b *testing.B) {
	environ := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/root/go/bin", "HOME=/root", "LANG=C.UTF-8",
		"TERM=xterm-256color", "SHELL=/bin/bash", "USER=root", "LOGNAME=root", "PWD=/work", "OLDPWD=/",
		"LS_COLORS=rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:cd=40;33;01:or=40;31;01",
		"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "OPENAI_API_KEY=sk-proj-0123456789abcdefghijklmnopqrstuvwxyz",
		"GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345", "DATABASE_URL=postgres://app:pw@db/app",
		"GOPATH=/root/go", "GOFLAGS=-mod=mod", "EDITOR=vim", "PAGER=less", "TMPDIR=/tmp", "XDG_RUNTIME_DIR=/run/user/0",
		"HTTPS_PROXY=http://proxy:3128", "NO_PROXY=localhost,127.0.0.1", "TOKENIZERS_PARALLELISM=false",
		"AGENT_SKILLS=all", "AGENT_HOME=/root/.agent", "HOSTNAME=box", "SHLVL=1", "_=/usr/bin/agent",
	}
	for i := range 30 {
		environ = append(environ, "APP_SETTING_"+strings.Repeat("X", i)+"=value number "+strings.Repeat("v", i))
	}
	p := Policy{All: true}
	b.ReportAllocs()
	for b.Loop() {
		if len(p.Filter(environ)) == 0 {
			b.Fatal("nothing passed")
		}
	}
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
