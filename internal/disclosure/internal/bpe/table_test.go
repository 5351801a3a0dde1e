package bpe

import (
	"errors"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// TestEmbeddedTableIsGenerated proves cl100k_base.bpe is exactly what Build
// makes of tiktoken-go-loader's cl100k_base.tiktoken.
func TestEmbeddedTableIsGenerated(t *testing.T) {
	src, err := assets.Assets.ReadFile("cl100k_base.tiktoken")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Build(src)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != CL100KBase {
		t.Fatal("cl100k_base.bpe is stale; run `go generate ./internal/disclosure/internal/bpe`")
	}
	if _, err := Open(CL100KBase); err != nil {
		t.Fatalf("the full check refuses the embedded table: %v", err)
	}
	tab, err := CL100K()
	if err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 100256 {
		t.Fatalf("Len = %d, want 100256", tab.Len())
	}
	for _, r := range []int{0, 1, 255, 1000, 100255} {
		if got, ok := tab.Rank(tab.Token(r)); !ok || got != r {
			t.Errorf("Rank(Token(%d)) = %d, %v", r, got, ok)
		}
	}
	if _, ok := tab.Rank("\x00not a token at all\x00"); ok {
		t.Error("Rank of a non-token succeeded")
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"no rank":      "IQ==\n",
		"bad rank":     "IQ== x\n",
		"out of order": "IQ== 1\n",
		"bad base64":   "!!!! 0\n",
		"duplicate":    "IQ== 0\nIQ== 1\n",
	} {
		if _, err := Build([]byte(src)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
	for name, data := range map[string]string{"empty": "", "magic": "NOTATABLE\x00\x00\x00\x00\x00\x00\x00\x00", "truncated": CL100KBase[:len(CL100KBase)-1]} {
		if _, err := Open(data); !errors.Is(err, ErrFormat) {
			t.Errorf("Open(%s): err = %v, want ErrFormat", name, err)
		}
	}
}

func FuzzOpen(f *testing.F) {
	f.Add(CL100KBase[:200])
	small, _ := Build([]byte("IQ== 0\nIg== 1\nIQIg 2\n"))
	f.Add(string(small))
	f.Fuzz(func(t *testing.T, data string) {
		tab, err := Open(data)
		if err != nil {
			return
		}
		// A table that opens must answer lookups without panicking.
		for _, k := range []string{"", "a", "ab", "\x00"} {
			_, _ = tab.Rank(k)
		}
		for r := 0; r < tab.Len() && r < 64; r++ {
			_ = tab.Token(r)
		}
	})
}
