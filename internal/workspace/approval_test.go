package workspace

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode"
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
