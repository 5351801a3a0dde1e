package disclosure

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSubstitute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		args []string
		want string
	}{
		{"all arguments", "Run with $ARGUMENTS now.", []string{"a", "b c"}, "Run with a b c now."},
		{"indexed", "first=$ARGUMENTS[0] second=$ARGUMENTS[1]", []string{"x", "y"}, "first=x second=y"},
		{"shorthand zero based", "$0 then $1", []string{"x", "y"}, "x then y"},
		{"ten is one index", "[$10]", []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "ten"}, "[ten]"},
		{"index then literal zero", "[$ARGUMENTS[1]0]", []string{"a", "b"}, "[b0]"},
		{"missing index is empty", "<$3><$ARGUMENTS[7]>", []string{"a"}, "<><>"},
		{"no args, placeholders empty", "x$ARGUMENTS y$0", nil, "x y"},
		{"dollar amount kept", "It costs $5.00 or $1,000; pay $0", []string{"now"}, "It costs $5.00 or $1,000; pay now"},
		{"bare dollar amount is a placeholder", "costs $5", []string{"a"}, "costs "},
		{"escaped placeholders", `literal \$ARGUMENTS and \$1 and \$ARGUMENTS[0]`, []string{"a"}, "literal $ARGUMENTS and $1 and $ARGUMENTS[0]\n\nARGUMENTS: a\n"},
		{"shell variables untouched", "echo $HOME $PATH \\$HOME $", []string{"a"}, "echo $HOME $PATH \\$HOME $\n\nARGUMENTS: a\n"},
		{"word after ARGUMENTS", "$ARGUMENTS_FILE", []string{"a"}, "$ARGUMENTS_FILE\n\nARGUMENTS: a\n"},
		{"punctuation after ARGUMENTS", "($ARGUMENTS).", []string{"a"}, "(a)."},
		{"malformed index", "$ARGUMENTS[x] $ARGUMENTS[", []string{"a"}, "a[x] a["},
		{"no placeholder appends", "# Title\nDo it.", []string{"one", "two"}, "# Title\nDo it.\n\nARGUMENTS: one two\n"},
		{"no placeholder trailing newline", "Do it.\n", []string{"x"}, "Do it.\n\nARGUMENTS: x\n"},
		{"no placeholder no args", "Do it.\n", nil, "Do it.\n"},
		{"huge index", "$99999999999999999999", []string{"a"}, ""},
		{"unicode around", "héllo $0 wörld", []string{"ü"}, "héllo ü wörld"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Substitute(tt.body, tt.args); got != tt.want {
				t.Errorf("Substitute(%q, %q)\n got %q\nwant %q", tt.body, tt.args, got, tt.want)
			}
		})
	}
}

func FuzzSubstitute(f *testing.F) {
	for _, s := range []string{"$ARGUMENTS", "$ARGUMENTS[1]", "$0 $10", "$5.00", `\$1`, "$ARGUMENTS[", "plain", "$$", "\\$ARGUMENTS_X"} {
		f.Add(s, "a b")
	}
	f.Fuzz(func(t *testing.T, body, joined string) {
		args := strings.Fields(joined)
		out := Substitute(body, args)
		// With no arguments and no placeholder, the body is unchanged
		// except for escapes.
		if !strings.Contains(body, "$") && out != body && len(args) == 0 {
			t.Fatalf("body without $ changed: %q -> %q", body, out)
		}
		if utf8.ValidString(body) && utf8.ValidString(joined) && !utf8.ValidString(out) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", out)
		}
		if !HasPlaceholder(body) && len(args) > 0 && !strings.HasSuffix(out, "\nARGUMENTS: "+strings.Join(args, " ")+"\n") {
			t.Fatalf("no placeholder in %q but no ARGUMENTS line: %q", body, out)
		}
	})
}

func TestSubstituteSkillDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body, dir, want string
	}{
		{"each occurrence", "Run ${CLAUDE_SKILL_DIR}/scripts/a.py; read ${CLAUDE_SKILL_DIR}/ref.md", "/home/u/.agent/skills/x", "Run /home/u/.agent/skills/x/scripts/a.py; read /home/u/.agent/skills/x/ref.md"},
		{"no folder: as written", "Run ${CLAUDE_SKILL_DIR}/a.py", "", "Run ${CLAUDE_SKILL_DIR}/a.py"},
		{"other variables untouched", "$CLAUDE_SKILL_DIR ${HOME} ${CLAUDE_PROJECT_DIR}", "/s", "$CLAUDE_SKILL_DIR ${HOME} ${CLAUDE_PROJECT_DIR}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := SubstituteSkillDir(tc.body, tc.dir); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}
