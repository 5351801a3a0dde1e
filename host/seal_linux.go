//go:build linux && !portable

package host

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// newSealable returns an empty in-memory file (memfd) that can be sealed
// and executed. Nothing outside this process can reach it except through
// our descriptor, and once sealed nobody, us included, can change it.
func newSealable(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate("agent-plugin:"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		// Kernels before 6.3 know no MFD_EXEC; their memfds are executable.
		fd, err = unix.MemfdCreate("agent-plugin:"+name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return os.NewFile(uintptr(fd), "memfd:"+name), nil
}

// seal makes f immutable for good: no write, no resize, no unsealing. It
// returns the file to keep (f itself).
func seal(f *os.File) (*os.File, error) {
	_, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_WRITE|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL)
	if err != nil {
		return f, fmt.Errorf("seal memfd: %w", err)
	}
	return f, nil
}

// copyInto fills dst with src's bytes. Without a hash it lets the kernel
// copy (sendfile), which never brings the bytes into user space.
func copyInto(dst, src *os.File, hash io.Writer) (int64, error) {
	if hash == nil {
		return io.Copy(dst, src)
	}
	buf := make([]byte, 1<<20)
	return io.CopyBuffer(io.MultiWriter(dst, hash), onlyReader{src}, buf)
}

// onlyReader hides src's WriterTo so that io.CopyBuffer uses our buffer.
type onlyReader struct{ io.Reader }

// readLease takes a read lease on f, which the kernel grants only while
// no one has the file open for writing (a writable shared mapping counts),
// and which makes any later open for writing wait until we let go (the
// kernel tells us with SIGIO, which the Go runtime ignores unless asked).
// release must be called; ok is false when the lease was refused (a writer
// exists, not our file, or the file system has no leases).
func readLease(f *os.File) (release func(), ok bool) {
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		return func() {}, false
	}
	return func() { _, _ = unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK) }, true
}

const sealedCopies = true
