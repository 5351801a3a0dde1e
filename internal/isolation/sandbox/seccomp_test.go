//go:build linux && !portable

package sandbox

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/isolation/sandbox/confine"
)

// TestSeccompFilter runs the raw syscalls the filter judges on a
// throwaway thread that carries it, for each kind of child: a script
// (no AF_UNIX sockets), a plugin (no connect), a plugin behind the proxy
// (connect kept for the proxy).
func TestSeccompFilter(t *testing.T) {
	t.Parallel()
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
		hostNet     error
	}
	calls := []call{
		{"socket(AF_UNIX, SOCK_STREAM)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0, unix.EACCES, nil, nil, nil},
		{"socket(AF_UNIX|1<<32, SOCK_STREAM)", unix.SYS_SOCKET, unix.AF_UNIX | hi, unix.SOCK_STREAM, 0, unix.EACCES, nil, nil, nil},
		{"socket(AF_UNIX, SOCK_SEQPACKET)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_SEQPACKET, 0, unix.EACCES, nil, nil, nil},
		{"socket(AF_UNIX, SOCK_DGRAM)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0, unix.EACCES, unix.EACCES, unix.EACCES, nil},
		{"socket(AF_UNIX, SOCK_RAW)", unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_RAW, 0, unix.EACCES, unix.EACCES, unix.EACCES, nil},
		{"socket(AF_INET, SOCK_STREAM)", unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0, nil, nil, nil, nil},
		{"socket(AF_INET, SOCK_DGRAM)", unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM, 0, nil, nil, nil, nil},
		{"connect(-1)", unix.SYS_CONNECT, ^uintptr(0), 0, 0, unix.EBADF, unix.EACCES, unix.EBADF, unix.EBADF},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, 1, 0, 0, unix.EACCES, unix.EACCES, unix.EACCES, unix.EFAULT},
	}
	// What Docker's default profile denies, every kind alike; each call's
	// arguments are invalid, so that a filter that let it through would
	// get another errno and change nothing.
	for _, c := range []call{
		{name: "ptrace(PTRACE_PEEKDATA, 0)", nr: unix.SYS_PTRACE, a0: unix.PTRACE_PEEKDATA},
		{name: "process_vm_readv(0)", nr: unix.SYS_PROCESS_VM_READV},
		{name: "pidfd_getfd(-1)", nr: unix.SYS_PIDFD_GETFD, a0: ^uintptr(0)},
		{name: "perf_event_open(NULL)", nr: unix.SYS_PERF_EVENT_OPEN},
		{name: "bpf(-1)", nr: unix.SYS_BPF, a0: ^uintptr(0)},
		{name: "keyctl(-1)", nr: unix.SYS_KEYCTL, a0: ^uintptr(0)},
		{name: "mount(NULL)", nr: unix.SYS_MOUNT},
		{name: "unshare(CLONE_NEWUSER|CLONE_NEWNS)", nr: unix.SYS_UNSHARE, a0: unix.CLONE_NEWUSER | unix.CLONE_NEWNS},
		{name: "clone(CLONE_NEWUSER|CLONE_NEWPID with a bad stack)", nr: unix.SYS_CLONE, a0: unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_VM | unix.CLONE_THREAD, a1: 1},
		{name: "setns(-1)", nr: unix.SYS_SETNS, a0: ^uintptr(0)},
		{name: "sethostname(bad pointer, 1)", nr: unix.SYS_SETHOSTNAME, a0: 1, a1: 1},
		{name: "clock_settime(bad clock)", nr: unix.SYS_CLOCK_SETTIME, a0: ^uintptr(0)},
		{name: "reboot(0)", nr: unix.SYS_REBOOT},
		{name: "kexec_load(NULL)", nr: unix.SYS_KEXEC_LOAD},
		{name: "init_module(NULL)", nr: unix.SYS_INIT_MODULE},
	} {
		c.script, c.plugin, c.proxyPlugin, c.hostNet = unix.EPERM, unix.EPERM, unix.EPERM, unix.EPERM
		calls = append(calls, c)
	}
	calls = append(calls, call{"clone3(NULL)", unix.SYS_CLONE3, 0, 0, 0, unix.ENOSYS, unix.ENOSYS, unix.ENOSYS, unix.ENOSYS})
	pair := func(typ int, want error) call {
		return call{"socketpair(AF_UNIX, " + map[int]string{unix.SOCK_STREAM: "SOCK_STREAM", unix.SOCK_DGRAM: "SOCK_DGRAM"}[typ] + ")", unix.SYS_SOCKETPAIR, unix.AF_UNIX, uintptr(typ), 0, want, want, want, nil}
	}
	calls = append(calls, pair(unix.SOCK_STREAM, nil), pair(unix.SOCK_DGRAM, unix.EACCES))
	if runtime.GOARCH == "amd64" {
		// The x32 ABI's numbers carry bit 30.
		calls = append(calls, call{"x32 socket(AF_UNIX)", 0x40000000 | unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0, unix.ENOSYS, unix.ENOSYS, unix.ENOSYS, unix.ENOSYS})
	}
	for _, kind := range []struct {
		name string
		key  confine.FilterKey
		want func(call) error
	}{
		{"script", confine.FilterKey{Unix: true}, func(c call) error { return c.script }},
		{"plugin", confine.FilterKey{Unix: true, Serves: true}, func(c call) error { return c.plugin }},
		{"plugin with declared hosts", confine.FilterKey{Unix: true, Serves: true, Proxied: true}, func(c call) error { return c.proxyPlugin }},
		{"host network", confine.FilterKey{}, func(c call) error { return c.hostNet }},
	} {
		t.Run(kind.name, func(t *testing.T) {
			f, err := confine.Filter(kind.key)
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

// onThrowawayThread runs f on an OS thread locked to a goroutine that
// ends without unlocking it, so the runtime ends the thread and whatever
// f changed in it (its seccomp filter) goes with it.
func onThrowawayThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- f()
	}()
	return <-done
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
