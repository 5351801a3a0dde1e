package catalog

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzParseAnswer feeds search API answers to ParseAnswer: it never
// panics, and what it returns is clean (no control characters, bounded
// fields, a name and a source, installs never negative).
func FuzzParseAnswer(f *testing.F) {
	f.Add([]byte(`{"skills":[{"id":"o/r/pdf","name":"pdf","installs":12,"source":"o/r"}]}`))
	f.Add([]byte(`{"skills":[{"id":"o/r/x","name":"x\u001b[31m","installs":-3.5,"source":""}]}`))
	f.Add([]byte(`{"skills":[{"name":"a","installs":1e300,"source":"s","description":"d"}]}`))
	f.Add([]byte(`{"skills":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		skills, err := ParseAnswer(body)
		if err != nil {
			return
		}
		if len(skills) > maxAnswerSkills {
			t.Fatalf("%d skills", len(skills))
		}
		for _, s := range skills {
			if s.Name == "" || s.Source == "" || s.Installs < 0 || s.Kind != KindIndex {
				t.Fatalf("bad skill %+v", s)
			}
			for _, field := range []string{s.Name, s.Source, s.Description} {
				if len(field) > maxFieldLen || strings.IndexFunc(field, unicode.IsControl) >= 0 {
					t.Fatalf("unclean field %q", field)
				}
			}
			if src, _, ok := SplitID(s.ID); ok && src != s.Source {
				t.Fatalf("id %q does not name source %q", s.ID, s.Source)
			}
		}
	})
}
