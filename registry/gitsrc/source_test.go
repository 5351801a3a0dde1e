package gitsrc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := filepath.Join(dir, "we@ird")
	if err := os.Mkdir(at, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    Source
		wantErr error
	}{
		{name: "https", in: "https://example.com/o/r.git", want: Source{URL: "https://example.com/o/r.git"}},
		{name: "https with ref", in: "https://example.com/o/r.git@main", want: Source{URL: "https://example.com/o/r.git", Ref: "main"}},
		{name: "https userinfo", in: "https://user@example.com/o/r", want: Source{URL: "https://user@example.com/o/r"}},
		{name: "http", in: "http://127.0.0.1:8080/r", want: Source{URL: "http://127.0.0.1:8080/r"}},
		{name: "ssh url", in: "ssh://git@example.com/o/r.git", want: Source{URL: "ssh://git@example.com/o/r.git"}},
		{name: "git url", in: "git://example.com/o/r", want: Source{URL: "git://example.com/o/r"}},
		{name: "file url", in: "file:///srv/r", want: Source{URL: "file:///srv/r"}},
		{name: "scp", in: "git@github.com:o/r.git", want: Source{URL: "git@github.com:o/r.git"}},
		{name: "scp with constraint", in: "git@github.com:o/r.git@^1.2", want: Source{URL: "git@github.com:o/r.git", Constraint: "^1.2"}},
		{name: "owner/repo", in: "anthropics/skills", want: Source{URL: "https://github.com/anthropics/skills.git"}},
		{name: "owner/repo.git", in: "anthropics/skills.git", want: Source{URL: "https://github.com/anthropics/skills.git"}},
		{name: "owner/repo tag", in: "o/r@v1.2.0", want: Source{URL: "https://github.com/o/r.git", Ref: "v1.2.0"}},
		{name: "owner/repo constraint", in: "o/r@>=1.0, <2", want: Source{URL: "https://github.com/o/r.git", Constraint: ">=1.0, <2"}},
		{name: "owner/repo major", in: "o/r@1", want: Source{URL: "https://github.com/o/r.git", Constraint: "1"}},
		{name: "owner/repo 1.x", in: "o/r@1.x", want: Source{URL: "https://github.com/o/r.git", Constraint: "1.x"}},
		{name: "owner/repo tilde", in: "o/r@~1.2.3", want: Source{URL: "https://github.com/o/r.git", Constraint: "~1.2.3"}},
		{name: "owner/repo sha", in: "o/r@0123abc", want: Source{URL: "https://github.com/o/r.git", Ref: "0123abc"}},
		{name: "owner/repo branch", in: "o/r@feature-x", want: Source{URL: "https://github.com/o/r.git", Ref: "feature-x"}},
		{name: "github tree", in: "https://github.com/anthropics/skills/tree/main/skills/pdf", want: Source{URL: "https://github.com/anthropics/skills.git", Ref: "main", Skill: "skills/pdf"}},
		{name: "github tree root", in: "https://github.com/o/r/tree/v1.2.0", want: Source{URL: "https://github.com/o/r.git", Ref: "v1.2.0"}},
		{name: "github tree slash", in: "https://www.github.com/o/r/tree/main/skills/.curated/x/", want: Source{URL: "https://github.com/o/r.git", Ref: "main", Skill: "skills/.curated/x"}},
		{name: "github blob", in: "https://github.com/o/r/blob/0123abc/a%20b/SKILL.md?plain=1", want: Source{URL: "https://github.com/o/r.git", Ref: "0123abc", Skill: "a b"}},
		{name: "github blob root", in: "https://github.com/o/r/blob/main/SKILL.md", want: Source{URL: "https://github.com/o/r.git", Ref: "main"}},
		{name: "github blob skill.md", in: "https://github.com/o/r/blob/main/x/skill.md", want: Source{URL: "https://github.com/o/r.git", Ref: "main", Skill: "x"}},
		{name: "github blob not SKILL.md", in: "https://github.com/o/r/blob/main/README.md", wantErr: ErrUnsupportedSource},
		{name: "github tree escape", in: "https://github.com/o/r/tree/main/../../x", wantErr: ErrUnsupportedSource},
		{name: "local abs", in: dir, want: Source{URL: dir}},
		{name: "local with at", in: at, want: Source{URL: at}},
		{name: "local with ref", in: dir + "@main", want: Source{URL: dir, Ref: "main"}},
		{name: "local missing", in: filepath.Join(dir, "nope"), wantErr: ErrRepoNotFound},
		{name: "ext transport", in: "ext::sh -c touch% /tmp/pwned", wantErr: ErrUnsupportedSource},
		{name: "fd transport", in: "fd::3", wantErr: ErrUnsupportedSource},
		{name: "https transport helper", in: "https::example.com/r", wantErr: ErrUnsupportedSource},
		{name: "ftp", in: "ftp://example.com/r", wantErr: ErrUnsupportedSource},
		{name: "empty", in: "", wantErr: ErrUnsupportedSource},
		{name: "garbage", in: "not a source", wantErr: ErrUnsupportedSource},
		{name: "bad constraint", in: "o/r@^^1", wantErr: ErrUnsupportedSource},
		{name: "no host", in: "https:///r", wantErr: ErrUnsupportedSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSource(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseSource(%q) = %+v, %v; want %v", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSource(%q): %v", tt.in, err)
			}
			tt.want.Raw, tt.want.Kind = tt.in, KindGit // every case here is a git source
			if got != tt.want {
				t.Fatalf("ParseSource(%q) = %+v; want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzParseSource(f *testing.F) {
	for _, s := range []string{"https://example.com/o/r.git@main", "git@github.com:o/r@^1", "o/r@v1.0.0", "ext::sh -c x",
		"/tmp@x", "./a", "file:///x", "ssh://u@h/p", "o/r@>=1, <2", "fd::1", "~/x",
		"https://github.com/o/r/blob/main/x/skill.md", "https://github.com/o/r/tree/v1/skills/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		src, err := ParseSource(s)
		if err != nil {
			if !errors.Is(err, ErrUnsupportedSource) && !errors.Is(err, ErrRepoNotFound) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if src.URL == "" {
			t.Fatal("empty URL")
		}
		if src.Ref != "" && src.Constraint != "" {
			t.Fatal("both ref and constraint")
		}
		if err := CheckCloneURL(src.URL); err != nil {
			t.Fatalf("ParseSource(%q) accepted %q that Clone refuses: %v", s, src.URL, err)
		}
	})
}
