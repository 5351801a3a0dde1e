package disclosure

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// reference is tiktoken-go itself, the yardstick for CL100K.
var reference = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	return tiktoken.GetEncoding("cl100k_base")
})

func refEncode(t testing.TB, s string) []int {
	t.Helper()
	enc, err := reference()
	if err != nil {
		t.Fatalf("load tiktoken-go: %v", err)
	}
	return enc.EncodeOrdinary(s)
}

var tokenizerCorpus = []string{
	"",
	"hello world",
	"Hello, World! It's a test; we'll see what they've done. I'M SURE HE'D LL",
	"hello-extended: Greets people in many languages with a Go plugin.",
	"   leading spaces and trailing   ",
	"line one\nline two\r\n\r\n  indented\n\n\n",
	"tabs\tand\t\tmore\t",
	"numbers 1 12 123 1234 12345 3.14159 1,000,000 $5.00",
	"unicode: héllo wörld — “quotes” 日本語のテキスト 한국어 Ελληνικά עברית العربية",
	"emoji 😀🎉👍🏽 family 👨‍👩‍👧",
	"code: func main() { fmt.Println(\"hi\") } // comment\n\tif x != nil {\n\t\treturn\n\t}",
	"<|endoftext|> is special but counted as text",
	"'s 't 're 've 'm 'll 'd 'S 'T 'RE 'VE 'M 'LL 'D 'x 'r 'v 'l",
	"a\u00a0b\u2003c\u0085d\u3000e",
	"Ⅷ ½ ² ٣ numbers of other kinds",
	" ?!?! ... ---\n\n",
	"\n \n \n",
	"x  \n",
	"  \t  y",
	"invalid \xff\xfe utf8 \xc3",
	strings.Repeat("=", 300),
	strings.Repeat("abc ", 500),
}

func TestCL100KMatchesTiktoken(t *testing.T) {
	t.Parallel()
	tok := DefaultTokenizer()
	for _, s := range tokenizerCorpus {
		got, want := tok.Encode(s), refEncode(t, s)
		if !slices.Equal(got, want) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", s, got, want)
		}
		if n := tok.Count(s); n != len(want) {
			t.Errorf("Count(%q) = %d, want %d", s, n, len(want))
		}
	}
}

// TestCL100KMatchesTiktokenOnRepoFiles compares the two on real text: the
// markdown, Go and Python files of this repository.
func TestCL100KMatchesTiktokenOnRepoFiles(t *testing.T) {
	t.Parallel()
	// The repository root is two levels up; check that, so the test never
	// reads beside the clone (other tests' temp folders come and go there).
	root := filepath.Join("..", "..")
	if mod, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.Contains(string(mod), "module github.com/agentskills/agent\n") {
		t.Fatalf("repository root %s: no go.mod of github.com/agentskills/agent (%v)", root, err)
	}
	var files []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || (d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata")) {
			return filepath.SkipDir
		}
		switch filepath.Ext(p) {
		case ".md", ".go", ".py", ".txtar", ".proto":
			if !strings.HasSuffix(p, ".pb.go") {
				files = append(files, p)
			}
		}
		return nil
	})
	if len(files) > 80 {
		files = files[:80]
	}
	tok := DefaultTokenizer()
	total := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		if len(s) > 16000 {
			s = s[:16000]
		}
		got, want := tok.Encode(s), refEncode(t, s)
		if !slices.Equal(got, want) || tok.Count(s) != len(want) {
			t.Errorf("%s: %d tokens (counted %d), tiktoken-go %d", f, len(got), tok.Count(s), len(want))
		}
		total += len(want)
	}
	t.Logf("%d files, %d tokens, identical", len(files), total)
}

func FuzzCL100K(f *testing.F) {
	for _, s := range tokenizerCorpus {
		f.Add(s)
	}
	tok := DefaultTokenizer()
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		got, want := tok.Encode(s), refEncode(t, s)
		if !slices.Equal(got, want) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", s, got, want)
		}
		if n := tok.Count(s); n != len(want) {
			t.Errorf("Count(%q) = %d, want %d", s, n, len(want))
		}
	})
}

func BenchmarkTokenizerLoad(b *testing.B) {
	for b.Loop() {
		var t CL100K
		if err := t.Load(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTiktokenGoLoad(b *testing.B) {
	tiktoken.SetBpeLoader(loader.NewOfflineLoader())
	for b.Loop() {
		// GetEncoding caches the parsed ranks but rebuilds the CoreBPE.
		if _, err := tiktoken.GetEncoding("cl100k_base"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCount16K(b *testing.B) {
	s := strings.Repeat("hello-extended: Greets people in many languages, with a Go plugin and a script.\n", 200)[:16000]
	tok := DefaultTokenizer()
	tok.Count("warm")
	for b.Loop() {
		tok.Count(s)
	}
}
