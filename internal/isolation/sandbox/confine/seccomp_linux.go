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

// The seccomp filter has two parts (docs/design.md):
//
//   - For every sandboxed child, what Docker's default profile denies a
//     container without added capabilities: ptrace, process_vm_*,
//     pidfd_getfd, perf_event_open, bpf, the keyrings, mounts, new
//     namespaces (clone with a CLONE_NEW* flag, unshare, setns),
//     kexec, reboot, modules, the clock and hostname setters,
//     userfaultfd and the rest listed in dockerDenied. They fail with
//     EPERM, as Docker's do; clone3, whose flags a filter cannot read,
//     fails with ENOSYS, so that libc falls back to clone.
//   - For code without the host's network (FilterKey.Unix), what
//     Landlock leaves open below ABI 9: pathname Unix sockets outside
//     its folder (/run/docker.sock, D-Bus, an ssh-agent). A filter
//     cannot read the address connect(2) is given, so it works on what
//     it can see, the syscall and its integer arguments:
//   - no AF_UNIX socket() at all, except for a child that serves
//     go-plugin on a Unix socket of its own (internal/sandbox's Policy.Serves): that one
//     keeps stream sockets to listen on and loses connect(2) instead,
//     unless it declares hosts, whose proxy it connects to;
//   - no AF_UNIX datagram socket() or socketpair(), which could send to a
//     path with sendto/sendmsg and never call connect;
//   - no io_uring, whose connect and sendmsg bypass seccomp;
//
// Either way a syscall of another ABI (i386's int 0x80 and its
// socketcall, x32) gets ENOSYS, since a filter for one ABI's numbers
// says nothing of another's. The socket rules fail with EACCES, as
// Landlock's denials do.

// dockerDenied are the syscalls Docker's default seccomp profile allows
// only with a capability that a sandboxed child never has, or not at
// all (moby/profiles/seccomp/default.json).
var dockerDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	"perf_event_open", "bpf", "userfaultfd", "fanotify_init",
	"keyctl", "add_key", "request_key",
	"mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr",
	"unshare", "setns",
	"kexec_load", "kexec_file_load", "reboot",
	"init_module", "finit_module", "delete_module",
	"clock_settime", "clock_adjtime", "settimeofday", "adjtimex",
	"sethostname", "setdomainname",
	"swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup",
	"open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
	"iopl", "ioperm", "personality", "uselib", "_sysctl", "nfsservctl",
}

// known are the names this architecture has (arm64 has no iopl).
func known(a *arch.Info, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := a.SyscallNames[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// newNamespaces are clone's flags that make a namespace.
const newNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// denied is the errno of a denied socket call, refused of the rest.
const (
	denied  = seccomp.ActionErrno | seccomp.Action(unix.EACCES)
	refused = seccomp.ActionErrno | seccomp.Action(unix.EPERM)
)

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
// socket rules apply (Unix: no host network), whether the child serves
// on a Unix socket and whether it connects to a proxy.
type FilterKey struct{ Unix, Serves, Proxied bool }

// filterBits is how many bits FilterKey.Bits uses.
const filterBits = 3

// Bits is k as Spec.Filter.
func (k FilterKey) Bits() int {
	b := 0
	if k.Serves {
		b |= 1
	}
	if k.Proxied {
		b |= 2
	}
	if k.Unix {
		b |= 4
	}
	return b
}

// KeyOf reads what Bits wrote.
func KeyOf(b int) FilterKey { return FilterKey{Serves: b&1 != 0, Proxied: b&2 != 0, Unix: b&4 != 0} }

var (
	filtersMu sync.Mutex
	filters   = map[FilterKey]*unix.SockFprog{}
)

// Filter returns the assembled filter for k, built once.
func Filter(k FilterKey) (*unix.SockFprog, error) {
	filtersMu.Lock()
	defer filtersMu.Unlock()
	if f, ok := filters[k]; ok {
		return f, nil
	}
	native, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("sandbox: seccomp: %w", err)
	}
	groups := []seccomp.SyscallGroup{
		{Names: known(native, dockerDenied), Action: refused},
		{NamesWithCondtions: []seccomp.NameWithConditions{{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: newNamespaces}}}}, Action: refused},
		{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
	}
	if k.Unix {
		conds := []seccomp.NameWithConditions{dgramUnix("socket"), dgramUnix("socketpair")}
		if !k.Serves {
			conds = append(conds, seccomp.NameWithConditions{Name: "socket", Conditions: lo32(0, unix.AF_UNIX)})
		}
		names := []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}
		if k.Serves && !k.Proxied {
			names = append(names, "connect")
		}
		groups = append(groups, seccomp.SyscallGroup{Names: names, Action: denied}, seccomp.SyscallGroup{NamesWithCondtions: conds, Action: denied})
	}
	pol := seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}
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
