//go:build linux && !portable

package sandbox

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/sandbox/confine"
)

// TestSeccompFilter runs the raw syscalls the filter judges on a
// throwaway thread that carries it, for each kind of child: a script
// (no AF_UNIX sockets), a plugin (no connect), a plugin behind the proxy
// (connect kept for the proxy).
func TestSeccompFilter(t *testing.T) {
	if !Probe().Seccomp {
		t.Skip("no seccomp on this kernel")
	}
	const hi = 1 << 32 // the high half of an int argument, which the kernel ignores
	type call struct {
		name        string
		nr          uintptr
		a0, a1, a2  uintptr
		script      error // the errno wanted; nil = allowed
		plugin      error
		proxyPlugin error
	}
	calls := []call{
		{"socket(AF_UNIX, SOCK_STREAM)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0, unix.EACCES, nil, nil},
		{"socket(AF_UNIX|1<<32, SOCK_STREAM)", unix.SYS_SOCKET, unix.AF_UNIX | hi, unix.SOCK_STREAM, 0, unix.EACCES, nil, nil},
		{"socket(AF_UNIX, SOCK_SEQPACKET)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, unix.EACCES, nil, nil},
		{"socket(AF_UNIX, SOCK_DGRAM)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0, unix.EACCES, unix.EACCES, unix.EACCES},
		{"socket(AF_UNIX, SOCK_RAW)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_RAW, 0, unix.EACCES, unix.EACCES, unix.EACCES},
		{"socket(AF_INET, SOCK_STREAM)", unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0, nil, nil, nil},
		{"socket(AF_INET, SOCK_DGRAM)", unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM, 0, nil, nil, nil},
		{"connect(-1)", unix.SYS_CONNECT, ^uintptr(0), 0, 0, unix.EBADF, unix.EACCES, unix.EBADF},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, 1, 0, 0, unix.EACCES, unix.EACCES, unix.EACCES},
	}
	pair := func(typ int, want error) call {
		return call{"socketpair(AF_UNIX, " + map[int]string{unix.SOCK_STREAM: "SOCK_STREAM", unix.SOCK_DGRAM: "SOCK_DGRAM"}[typ] + ")", unix.SYS_SOCKETPAIR, unix.AF_UNIX, uintptr(typ), 0, want, want, want}
	}
	calls = append(calls, pair(unix.SOCK_STREAM, nil), pair(unix.SOCK_DGRAM, unix.EACCES))
	if runtime.GOARCH == "amd64" {
		// The x32 ABI's numbers carry bit 30.
		calls = append(calls, call{"x32 socket(AF_UNIX)", 0x40000000 | unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0, unix.ENOSYS, unix.ENOSYS, unix.ENOSYS})
	}
	for _, kind := range []struct {
		name string
		key  confine.FilterKey
		want func(call) error
	}{
		{"script", confine.FilterKey{}, func(c call) error { return c.script }},
		{"plugin", confine.FilterKey{Serves: true}, func(c call) error { return c.plugin }},
		{"plugin with declared hosts", confine.FilterKey{Serves: true, Proxied: true}, func(c call) error { return c.proxyPlugin }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			f, err := confine.UnixFilter(kind.key)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]error, len(calls))
			err = onThrowawayThread(func() error {
				if err := confine.FilterThread(f); err != nil {
					return err
				}
				for i, c := range calls {
					var sv [2]int32
					a3 := uintptr(0)
					if c.nr == unix.SYS_SOCKETPAIR {
						a3 = uintptr(unsafe.Pointer(&sv))
					}
					r, _, errno := unix.RawSyscall6(c.nr, c.a0, c.a1, c.a2, a3, 0, 0)
					if errno != 0 {
						got[i] = errno
						continue
					}
					if c.nr == unix.SYS_SOCKETPAIR {
						unix.Close(int(sv[0]))
						unix.Close(int(sv[1]))
					} else if c.nr == unix.SYS_SOCKET || c.nr == unix.SYS_IO_URING_SETUP {
						unix.Close(int(r))
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range calls {
				want := kind.want(c)
				if !errors.Is(got[i], want) {
					t.Errorf("%s: got %v, want %v", c.name, got[i], orAllowed(want))
				}
			}
		})
	}
}

func orAllowed(err error) any {
	if err == nil {
		return "allowed"
	}
	return err
}

// BenchmarkSeccomp: a sandboxed start of a child that reads a file,
// with and without the seccomp filter, alternating in one run; medians
// and their ratio.
func BenchmarkSeccomp(b *testing.B) {
	s := Probe()
	if s.ABI == 0 || !s.Seccomp {
		b.Skip("no Landlock or seccomp here")
	}
	bin, binDir := self(b)
	p := Policy{Read: append([]string{binDir}, SystemLibs...)}
	run := func(on bool) func() {
		return func() {
			seccompOn = func() bool { return on }
			defer func() { seccompOn = func() bool { return Probe().Seccomp } }()
			startHelper(b, bin, p)
		}
	}
	mon, moff := alternate(b, run(true), run(false))
	b.ReportMetric(mon, "seccomp-ms")
	b.ReportMetric(moff, "noseccomp-ms")
	b.ReportMetric(mon/moff, "ratio")
}
