package workspace

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/agentskills/agent/sdk"
)

// FuzzDecodeSkillArgs decodes arbitrary use_skill "args": a list of
// strings, one string split on white space, or invalid_args with a short
// message, never a panic.
func FuzzDecodeSkillArgs(f *testing.F) {
	for _, s := range []string{``, `null`, `[]`, `["a","b c"]`, `"a  b\tc"`, `"  "`, `{}`, `[1]`, `"\u2003x"`, `[null]`, " \n[\"x\"] "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		args, err := decodeSkillArgs(json.RawMessage(raw))
		if err != nil {
			var e *sdk.Error
			if !errors.As(err, &e) || e.Code != sdk.CodeInvalidArgs {
				t.Fatalf("decodeSkillArgs(%q): %v, want invalid_args", raw, err)
			}
			if len(e.Message) > 400 {
				t.Fatalf("decodeSkillArgs(%q): a %d-byte message", raw, len(e.Message))
			}
			return
		}
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			for _, a := range args {
				if a == "" || strings.IndexFunc(a, unicode.IsSpace) >= 0 {
					t.Fatalf("decodeSkillArgs(%q) = %q: a string splits into words", raw, args)
				}
			}
		}
	})
}

// firstLineRunes is FirstLine as it was written first, by runes: the
// reference FuzzFirstLine holds it to.
func firstLineRunes(s string, max int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	r := []rune(strings.TrimSpace(s))
	if max > 0 && len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return string(r)
}

func FuzzFirstLine(f *testing.F) {
	for _, s := range []string{"", "a", "Sum two numbers.\nMore.", " héllo wörld ", "\xff\xfe abc", "日本語のテキスト"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 200
		if got, want := FirstLine(s, max), firstLineRunes(s, max); got != want {
			t.Fatalf("FirstLine(%q, %d) = %q, want %q", s, max, got, want)
		}
	})
}
