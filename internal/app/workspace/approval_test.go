package workspace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestApprovalArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, want string
	}{
		{"sorted", `{"workdir":"src","command":"ls"}`, `{"command":"ls","workdir":"src"}`},
		{"duplicate key runs what is shown", `{"command":"echo harmless","command":"touch PWNED"}`, `{"command":"touch PWNED"}`},
		{"escape sequence", "{\"command\":\"echo \\u001b[2Khidden\"}", `{"command":"echo \u001b[2Khidden"}`},
		{"raw DEL and C1", "{\"command\":\"a\x7fb\u009bc\"}", `{"command":"a\u007fb\u009bc"}`},
		{"bidi override", "{\"command\":\"rm \u202eexe.txt\"}", `{"command":"rm \u202eexe.txt"}`},
		{"html stays readable", `{"command":"a > b && c < d"}`, `{"command":"a > b && c < d"}`},
		{"numbers as written", `{"timeout_ms":12345678901234567890,"x":1.50}`, `{"timeout_ms":12345678901234567890,"x":1.50}`},
		{"newline", `{"command":"a\nb"}`, `{"command":"a\nb"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := approvalArgs([]byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Fatalf("approvalArgs(%q) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{`{"a":1} {"b":2}`, `{"a":`, ``} {
		if got, err := approvalArgs([]byte(bad)); err == nil {
			t.Errorf("approvalArgs(%q) = %s, want an error", bad, got)
		}
	}
}

// FuzzApprovalArgs: what is shown decodes to what the input meant (the
// value Go would run), and holds no character a terminal acts on.
func FuzzApprovalArgs(f *testing.F) {
	for _, s := range []string{`{"command":"ls","command":"rm"}`, "{\"a\":\"\x1b]0;x\x07\"}", `{"a":[1,2.5e3,{"b":null}]}`, "{\"a\":\"\u202e\U000e0001\"}", `{"a":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		shown, err := approvalArgs(in)
		if err != nil {
			return
		}
		for _, r := range string(shown) {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("shown %q holds %U", shown, r)
			}
		}
		var want, got any
		d := json.NewDecoder(bytes.NewReader(in))
		d.UseNumber()
		if d.Decode(&want) != nil {
			t.Fatalf("approvalArgs accepted %q, which does not decode", in)
		}
		d = json.NewDecoder(bytes.NewReader(shown))
		d.UseNumber()
		if err := d.Decode(&got); err != nil {
			t.Fatalf("shown %q does not decode: %v", shown, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("shown %q means %v, input %q meant %v", shown, got, in, want)
		}
	})
}

func TestEscapeTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Summarises CSV files.", "Summarises CSV files."},
		{"layout kept", "a\tb\nc", "a\tb\nc"},
		{"unicode kept", "Café ✓ 日本", "Café ✓ 日本"},
		{"clear screen", "x\x1b[2Jy", `x\u001b[2Jy`},
		{"osc 52", "\x1b]52;c;ZWNobyBoaQ==\x07", `\u001b]52;c;ZWNobyBoaQ==\u0007`},
		{"carriage return", "ok\rEVIL", `ok\u000dEVIL`},
		{"del", "a\x7fb", `a\u007fb`},
		{"c1 csi", "a\u009b2Jb", `a\u009b2Jb`},
		{"lone byte", "a\x9b2Jb", `a\x9b2Jb`},
		{"bidi override", "a\u202eb", `a\u202eb`},
		{"tag character", "a\U000e0001b", `a\udb40\udc01b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EscapeTerminal(tc.in); got != tc.want {
				t.Errorf("EscapeTerminal(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzEscapeTerminal(f *testing.F) {
	for _, s := range []string{"a\x1b[2Jb", "\x1b]52;c;eA==\x07", "\t\n\r", "\xc2\x9b", "\x9b", "\u202e", "日本\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := EscapeTerminal(in)
		if !utf8.ValidString(out) {
			t.Fatalf("EscapeTerminal(%q) = %q, not UTF-8", in, out)
		}
		for _, r := range out {
			if r != '\t' && r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Fatalf("EscapeTerminal(%q) = %q holds %U", in, out, r)
			}
		}
		// Text with nothing to escape is returned as it is.
		if !strings.ContainsFunc(in, func(r rune) bool {
			return r == utf8.RuneError || r != '\t' && r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r))
		}) && out != in {
			t.Fatalf("EscapeTerminal(%q) = %q changed plain text", in, out)
		}
	})
}
