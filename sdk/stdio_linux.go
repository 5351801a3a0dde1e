package sdk

import (
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handshakeOut is the real stdout of a plugin process, kept for the one
// line that go-plugin's handshake writes.
var handshakeOut *os.File

// init runs before the plugin's own package initialisers and main, so
// anything they print to stdout lands on stderr (and in the host's log)
// instead of corrupting the handshake line. It only acts when the host's
// cookie is set: the agent CLI imports this package too and its stdout is
// real output.
func init() {
	if os.Getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		return
	}
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return // stdout closed: nothing to protect
	}
	if err := unix.Dup3(2, 1, 0); err != nil {
		_ = unix.Close(fd)
		return
	}
	handshakeOut = os.NewFile(uintptr(fd), "handshake")
	setProcName()
	contain()
}

func useHandshakeStdout() {
	if handshakeOut != nil {
		os.Stdout = handshakeOut
	}
}

// setProcName restores a readable process name: the host executes a
// verified file descriptor (/proc/self/fd/N), which makes the kernel's
// name for us a bare number. argv[0] is the real path.
func setProcName() {
	name := filepath.Base(os.Args[0])
	if len(name) > 15 {
		name = name[:15]
	}
	b := append([]byte(name), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}
