package cli

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzReadCallArgs checks that any argument string is either accepted as a
// JSON object or refused as a usage error, never anything else.
func FuzzReadCallArgs(f *testing.F) {
	for _, seed := range []string{"", "{}", `{"a":1}`, "[1]", "null", "{", " \n{\"x\":[1,2,{}]}\t", `"str"`, "-"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		ios, in, _, _ := TestIO()
		in.WriteString(arg)
		got, err := readCallArgs(&callOptions{IO: ios, Args: arg})
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("readCallArgs(%q) error %v is not a usage error", arg, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(got, &obj); err != nil || obj == nil {
			t.Fatalf("readCallArgs(%q) = %s, not a JSON object", arg, got)
		}
	})
}
