package manifest

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{name: "mixed case underscore", in: "Kalshi_Markets", want: "kalshi-markets"},
		{name: "already canonical", in: "pdf-tools", want: "pdf-tools"},
		{name: "digits", in: "a1_B2", want: "a1-b2"},
		{name: "64 chars", in: strings.Repeat("a", 64), want: strings.Repeat("a", 64)},
		{name: "65 chars", in: strings.Repeat("a", 65), wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "dot", in: ".", wantErr: true},
		{name: "dotdot", in: "..", wantErr: true},
		{name: "tilde", in: "~", wantErr: true},
		{name: "pycache", in: "__pycache__", wantErr: true},
		{name: "pycache upper", in: "__PyCache__", wantErr: true},
		{name: "contains dotdot", in: "a..b", wantErr: true},
		{name: "slash", in: "a/b", wantErr: true},
		{name: "backslash", in: `a\b`, wantErr: true},
		{name: "space", in: "a b", wantErr: true},
		{name: "dot inside", in: "a.b", wantErr: true},
		{name: "unicode", in: "skïll", wantErr: true},
		{name: "nul", in: "a\x00", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidName) {
					t.Fatalf("Canonical(%q) = %q, %v; want ErrInvalidName", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Canonical(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"Kalshi_Markets", "..", "a/b", "__pycache__", "", "~", strings.Repeat("x", 65), "A-b_C"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Canonical(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("error not ErrInvalidName: %v", err)
			}
			return
		}
		if c == "" || len(c) > MaxNameLen || strings.ContainsAny(c, `/\. _`) || c != strings.ToLower(c) {
			t.Fatalf("Canonical(%q) = %q: not a safe canonical name", s, c)
		}
		if c2, err := Canonical(c); err != nil || c2 != c {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, c, c2, err)
		}
	})
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	cands := []string{"list", "info", "remove", "hello-extended", "kalshi_markets", "greet_in_language"}
	for _, tc := range []struct{ in, want string }{
		{"lsit", "list"},
		{"inf", "info"},
		{"remvoe", "remove"},
		{"hello-extnded", "hello-extended"},
		{"Kalshi-Markets", ""}, // the same name is no suggestion
		{"kalshi-market", "kalshi_markets"},
		{"greet_in_lang", "greet_in_language"},
		{"zzz", ""},
		{"x", ""},
	} {
		if got := Suggest(tc.in, cands); got != tc.want {
			t.Errorf("Suggest(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
