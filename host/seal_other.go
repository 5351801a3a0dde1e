//go:build !linux

package host

import (
	"io"
	"os"
	"path/filepath"
)

// newSealable: without memfd, a file in a private (0700) directory of our
// own, which nobody else can rewrite. Linux is the supported platform.
func newSealable(name string) (*os.File, error) {
	dir, err := os.MkdirTemp("", "agent-plugin-")
	if err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, filepath.Base(name)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o700)
}

func seal(f *os.File) error { return f.Chmod(0o500) }

func copyInto(dst, src *os.File, hash io.Writer) (int64, error) {
	if hash == nil {
		return io.Copy(dst, src)
	}
	return io.Copy(io.MultiWriter(dst, hash), src)
}

func readLease(*os.File) (func(), bool) { return func() {}, false }

const sealedCopies = false
