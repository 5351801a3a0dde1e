//go:build !linux || portable

package host

import (
	"io"
	"os"
	"path/filepath"
)

// The launch fallback (macOS, Windows, and Linux with the portable tag):
// without memfd, the verified copy is a file in a fresh folder that only
// this user can open (MkdirTemp makes it 0700; on Windows the user's
// temporary folder is private to the user), hashed while it is copied, made
// read-only and run from there. It stops other users, not code running as
// the same user.
func newSealable(name string) (*os.File, error) {
	dir, err := os.MkdirTemp("", "agent-plugin-")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, filepath.Base(name)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		_ = os.RemoveAll(dir)
	}
	return f, err
}

// seal makes the copy read-only and reopens it read-only: a file still open
// for writing cannot be executed (ETXTBSY on Linux, a sharing violation on
// Windows).
func seal(f *os.File) (*os.File, error) {
	if err := f.Chmod(0o500); err != nil {
		return f, err
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		return f, err
	}
	ro, err := os.Open(name)
	if err != nil {
		return f, err
	}
	return ro, nil
}

func copyInto(dst, src *os.File, hash io.Writer) (int64, error) {
	if hash == nil {
		return io.Copy(dst, src)
	}
	return io.Copy(io.MultiWriter(dst, hash), src)
}

// readLease: no leases here, so every launch hashes the copy it runs.
func readLease(*os.File) (func(), bool) { return func() {}, false }

const sealedCopies = false
