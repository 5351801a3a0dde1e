package copybuf_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/ground/copybuf"
)

// TestCopy copies what io.Copy would, in each direction that made a
// buffer per copy, and takes no buffer of its own once the pool holds one.
func TestCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		size int
	}{
		{"empty", 0},
		{"small", 100},
		{"one buffer", 32 << 10},
		{"several buffers", 100<<10 + 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(strings.Repeat("x", tc.size))
			// Into a file from memory (a checkout).
			p := filepath.Join(dir, tc.name)
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			n, err := copybuf.Copy(f, io.LimitReader(bytes.NewReader(data), 1<<30))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil || n != int64(tc.size) {
				t.Fatalf("copy into a file: %d bytes, %v; want %d", n, err, tc.size)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
				t.Fatalf("the file holds %d bytes, want %d", len(got), tc.size)
			}
			// From a file into a hash (a folder's hash).
			src, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			h := sha256.New()
			if n, err := copybuf.Copy(h, src); err != nil || n != int64(tc.size) {
				t.Fatalf("copy into a hash: %d bytes, %v", n, err)
			}
			if want := sha256.Sum256(data); !bytes.Equal(h.Sum(nil), want[:]) {
				t.Error("the hash differs from the data's")
			}
		})
	}
}

// TestCopyTakesNoBuffer: once the pool holds a buffer, a copy allocates
// no 32 KiB of its own, as io.Copy does into a hash or a file.
func TestCopyTakesNoBuffer(t *testing.T) {
	data := bytes.Repeat([]byte("y"), 10<<10)
	h := sha256.New()
	run := func(copy func(io.Writer, io.Reader) (int64, error)) uint64 {
		const n = 100
		copy(h, bytes.NewReader(data)) // fill the pool
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			h.Reset()
			if _, err := copy(h, io.LimitReader(bytes.NewReader(data), 1<<30)); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / n
	}
	if got := run(io.Copy); got < 32<<10 {
		t.Fatalf("io.Copy allocated %d bytes per copy; this test expects its 32 KiB buffer", got)
	}
	// Under -race, sync.Pool drops a quarter of what it is given (to
	// shake out races), so about 8 KiB a copy on average there.
	if got := run(copybuf.Copy); got > 16<<10 {
		t.Errorf("copybuf.Copy allocated %d bytes per copy, want under half a buffer (16 KiB)", got)
	}
}
