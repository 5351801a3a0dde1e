package base

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree writes a 10,000-file source tree (20 × 10 folders of 50
// files, about 4 KB each, 40 MB) in which about 2% of the files hold
// processOrder and about 1% define a func process<Name>(.
func benchTree(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the a value result error ctx config handler request response client server index count " +
		"buffer string int return if else for range func var const type struct map slice make append len nil true false")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.tmp\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	n := 0
	for i := range 20 {
		for j := range 10 {
			sub := filepath.Join(dir, fmt.Sprintf("pkg%02d", i), fmt.Sprintf("mod%02d", j))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
			for k := range 50 {
				var sb strings.Builder
				fmt.Fprintf(&sb, "package mod%02d\n\n", j)
				for line := 0; line < 100; line++ {
					sb.WriteString("\t")
					for range 6 {
						sb.WriteString(words[r.IntN(len(words))])
						sb.WriteByte(' ')
					}
					sb.WriteString("// process the data\n")
				}
				if n%50 == 7 {
					sb.WriteString("\tx := processOrder(ctx, order)\n")
				}
				if n%100 == 13 {
					sb.WriteString("func processPayment(ctx context.Context) error { return nil }\n")
				}
				n++
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("file%03d.go", k)), []byte(sb.String()), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return dir
}

// BenchmarkGrepFiles is the grep_files row of SPEC §11: the tool's whole
// search (walk, .gitignore, reads, match, order) against `grep -rn` of the
// same pattern over the same warm tree, in the same run. grep's output
// goes to a pipe, not /dev/null, which GNU grep would notice and stop at
// the first match.
func BenchmarkGrepFiles(b *testing.B) {
	dir := benchTree(b)
	s := &service{cfg: Config{Root: dir}.withDefaults()}
	for _, p := range []struct{ name, re, ere string }{
		{"literal", "processOrder", "processOrder"},
		{"prefixed", `func process[A-Z]\w*\(`, `func process[A-Z]\w*\(`},
	} {
		res, _, err := s.grep(context.Background(), GrepInput{Pattern: p.re, Limit: maxGrepLimit})
		if err != nil || len(res.Files) == 0 || res.Truncated {
			b.Fatalf("%s: %v %d files", p.name, err, len(res.Files))
		}
		b.Run(p.name+"/grep_files", func(b *testing.B) {
			for b.Loop() {
				if _, _, err := s.grep(context.Background(), GrepInput{Pattern: p.re, Limit: maxGrepLimit}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(res.Files)), "files")
		})
		b.Run(p.name+"/grep-rn", func(b *testing.B) {
			for b.Loop() {
				cmd := osexec.Command("grep", "-rnE", p.ere, dir)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
