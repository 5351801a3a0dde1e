package audit

import (
	"testing"
	"unicode"

	"github.com/mtibben/confusables"
)

// TestConfusableTable: the generated table is every non-ASCII letter or
// digit whose UTS #39 skeleton (the library's) is one ASCII letter or
// digit; regenerate it with go run gen_confusables.go.
func TestConfusableTable(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		want := ""
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if sk := confusables.Skeleton(string(r)); len(sk) == 1 && sk != string(r) {
				if c := sk[0]; 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
					want = sk
				}
			}
		}
		got, _ := skeleton(r)
		if got != want {
			t.Fatalf("skeleton(%U) = %q, the library says %q: run go run gen_confusables.go", r, got, want)
		}
		if want != "" {
			n++
		}
	}
	if n != len(confusableTable) || n < 100 {
		t.Errorf("%d confusable runes, table holds %d", n, len(confusableTable))
	}
	// Cyrillic а, Greek ο, fullwidth Ａ.
	for _, r := range []rune{'а', 'ο', 'Ａ'} {
		if !looksASCII(r) {
			t.Errorf("%q is not taken for ASCII", r)
		}
	}
}
