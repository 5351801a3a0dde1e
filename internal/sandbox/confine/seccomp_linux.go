//go:build linux && !portable

package confine

import (
	"fmt"
	"sync"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter closes what Landlock leaves open below ABI 9 for
// code without the host's network: pathname Unix sockets outside its
// folder (/run/docker.sock, D-Bus, an ssh-agent). A filter cannot read
// the address connect(2) is given, so it works on what it can see, the
// syscall and its integer arguments (docs/design.md):
//
//   - no AF_UNIX socket() at all, except for a child that serves
//     go-plugin on a Unix socket of its own (internal/sandbox's Policy.Serves): that one
//     keeps stream sockets to listen on and loses connect(2) instead,
//     unless it declares hosts, whose proxy it connects to;
//   - no AF_UNIX datagram socket() or socketpair(), which could send to a
//     path with sendto/sendmsg and never call connect;
//   - no io_uring, whose connect and sendmsg bypass seccomp;
//   - no syscall of another ABI (i386's int 0x80 and its socketcall,
//     x32): ENOSYS, since a filter for one ABI's numbers says nothing of
//     another's.
//
// Everything denied fails with EACCES, as Landlock's denials do.

// denied is the errno of a denied syscall.
const denied = seccomp.ActionErrno | seccomp.Action(unix.EACCES)

// lo32 matches an int argument equal to v in its low 32 bits: the
// kernel reads int arguments from the low half of the register, so a
// 64-bit Equal could be dodged by setting the high half.
func lo32(arg uint32, v uint32) seccomp.ArgumentConditions {
	return seccomp.ArgumentConditions{
		{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(v)},
		{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^v)},
	}
}

// dgramUnix matches socket/socketpair(AF_UNIX, SOCK_DGRAM or SOCK_RAW,
// which AF_UNIX makes a datagram socket): both types have bit 1 set, the
// stream and seqpacket types do not.
func dgramUnix(name string) seccomp.NameWithConditions {
	c := append(lo32(0, unix.AF_UNIX), seccomp.Condition{Argument: 1, Operation: seccomp.BitsSet, Value: unix.SOCK_DGRAM})
	return seccomp.NameWithConditions{Name: name, Conditions: c}
}

// FilterKey selects one of the filters: they differ by whether the
// child serves on a Unix socket and whether it connects to a proxy.
type FilterKey struct{ Serves, Proxied bool }

var (
	filtersMu sync.Mutex
	filters   = map[FilterKey]*unix.SockFprog{}
)

// UnixFilter returns the assembled filter for k, built once.
func UnixFilter(k FilterKey) (*unix.SockFprog, error) {
	filtersMu.Lock()
	defer filtersMu.Unlock()
	if f, ok := filters[k]; ok {
		return f, nil
	}
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	conds := []seccomp.NameWithConditions{dgramUnix("socket"), dgramUnix("socketpair")}
	if !k.Serves {
		conds = append(conds, seccomp.NameWithConditions{Name: "socket", Conditions: lo32(0, unix.AF_UNIX)})
	}
	names := []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}
	if k.Serves && !k.Proxied {
		names = append(names, "connect")
	}
	pol := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, Action: denied},
			{NamesWithCondtions: conds, Action: denied},
		},
	}
	body, err := pol.Assemble()
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	// The library answers a syscall of another ABI with the default
	// action (allow) and x32's with ENOSYS; answer every other ABI's
	// with ENOSYS first.
	prog := append([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)},
	}, body...)
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	fs := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		fs[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	f := &unix.SockFprog{Len: uint16(len(fs)), Filter: &fs[0]}
	filters[k] = f
	return f, nil
}

// FilterThread installs f on the calling thread only (no TSYNC), after
// no_new_privs, which an unprivileged thread needs for it.
func FilterThread(f *unix.SockFprog) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(f)), 0, 0); err != nil {
		return fmt.Errorf("sandbox: seccomp filter: %w", err)
	}
	return nil
}
