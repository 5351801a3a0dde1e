package run

import (
	"encoding/json"
	"testing"
)

// FuzzModelText feeds what a model or provider sends back (tool arguments,
// error bodies, attempt_completion answers) to the functions that read it:
// none may panic, and the arguments sent back in a history must always be
// a JSON object, as the Anthropic API requires.
func FuzzModelText(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"add": [`, `null`, `[]`, `"x"`, `{"remaining_todos":[{"id":1}]}`,
		`{"error":{"type":"rate_limit_error","message":"slow down"}}`, `{"error":{"code":"context_length_exceeded","message":"m"}}`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(objectArgs(s), &obj); err != nil || obj == nil {
			t.Fatalf("objectArgs(%q) = %s: not a JSON object", s, objectArgs(s))
		}
		_ = noOpenTodos(json.RawMessage(s))
		_ = errorMessage(s)
		_ = argsJSON(s)
		if !json.Valid(argsJSON(s)) {
			t.Fatalf("argsJSON(%q) is not JSON", s)
		}
	})
}
