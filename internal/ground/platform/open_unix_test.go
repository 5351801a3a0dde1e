//go:build unix

package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func TestOpenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	f, err := OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	flags, err := unix.FcntlInt(f.Fd(), syscall.F_GETFD, 0)
	if err != nil || flags&syscall.FD_CLOEXEC == 0 {
		t.Errorf("the file is not close-on-exec (flags %#x, %v): a child would inherit it", flags, err)
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "hello" {
		t.Fatalf("read back %q, %v", b, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	if want := fs.FileMode(0o755 &^ umask); fi.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), want)
	}
	_, err = OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrExist) || !errors.As(err, &pe) || pe.Path != p {
		t.Errorf("O_EXCL on an existing file: %v, want a *PathError for %s that is fs.ErrExist", err, p)
	}
}
