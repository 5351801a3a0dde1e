//go:build unix

package atomicfile

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteUmask is not parallel: it sets the process umask.
func TestWriteUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		opts []Option
		want fs.FileMode
	}{
		{name: "as given", want: 0o666},
		{name: "umask", opts: []Option{Umask()}, want: 0o640},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if err := Write(path, []byte("x"), 0o666, tt.opts...); err != nil {
				t.Fatal(err)
			}
			assertFile(t, path, "x", tt.want)
		})
	}
}
