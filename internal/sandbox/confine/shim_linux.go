//go:build linux && !portable

package confine

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The shim is how an unprivileged host gives a child declared hosts
// (docs/design.md, "Declared hosts unprivileged"). Unprivileged, the
// child's network namespace exists only once the child is cloned into
// it, and the host cannot enter it afterwards (setns needs
// CAP_SYS_ADMIN in the host's user namespace), so the proxy's listener
// must be made by the child itself. The child is therefore first this
// binary again (/proc/self/exe: the running agent, or the test binary,
// never a file someone can swap), with Env set: cloned into a user
// and a network namespace from an unrestricted thread, with its own
// uid and gid mapped to themselves and CAP_NET_ADMIN as its one ambient
// capability, it sets lo up, listens on 127.0.0.1:0, sends the listener
// to the host over an inherited SOCK_SEQPACKET socket (SCM_RIGHTS),
// drops every capability, restricts its own thread (no_new_privs,
// Landlock with the ruleset the host built, the seccomp filter) and
// execs the target with HTTP(S)_PROXY set. The host
// (internal/sandbox) serves the listener with the same proxy as root's.
//
// The socket is close-on-exec in the shim, so it ends at the target's
// exec: the host reads the listener, then end of file (the target
// runs) or the reason the shim failed (its errno, as os/exec reports a
// failed exec).

// Env carries the shim's orders (a Spec) to the re-executed
// binary; the shim removes it before its exec.
const Env = "AGENT_SANDBOX_SHIM"

func init() {
	// Before anything of this binary runs (its main, TestMain): a shim
	// never returns.
	if spec, ok := syscall.Getenv(Env); ok {
		runShim(spec)
	}
}

// Spec is what the shim does; encoded as comma-separated fields, the
// target's path last (it may hold commas).
type Spec struct {
	Ruleset int    // Landlock ruleset fd; -1: none
	Flags   uint32 // landlock_restrict_self's flags
	Sock    int    // the socket to the host
	Filter  int    // seccomp filter: -1 none, else FilterKey.Bits
	Listen  bool   // make the proxy's listener
	ExecFD  int    // the target's fd when Path is /proc/self/fd/N (closed at its exec); -1: none
	Path    string // the target
}

func (s Spec) String() string {
	return fmt.Sprintf("%d,%d,%d,%d,%t,%d,%s", s.Ruleset, s.Flags, s.Sock, s.Filter, s.Listen, s.ExecFD, s.Path)
}

// ParseSpec reads what Spec.String wrote.
func ParseSpec(v string) (Spec, error) {
	f := strings.SplitN(v, ",", 7)
	if len(f) != 7 || f[6] == "" {
		return Spec{}, fmt.Errorf("malformed %s=%q", Env, v)
	}
	var s Spec
	var errs [6]error
	s.Ruleset, errs[0] = strconv.Atoi(f[0])
	flags, err := strconv.ParseUint(f[1], 10, 32)
	s.Flags, errs[1] = uint32(flags), err
	s.Sock, errs[2] = strconv.Atoi(f[2])
	s.Filter, errs[3] = strconv.Atoi(f[3])
	s.Listen, errs[4] = strconv.ParseBool(f[4])
	s.ExecFD, errs[5] = strconv.Atoi(f[5])
	s.Path = f[6]
	if err := errors.Join(errs[:]...); err != nil || s.Sock < 3 || s.Ruleset < -1 || s.ExecFD < -1 || s.Filter < -1 || s.Filter > 3 {
		return Spec{}, fmt.Errorf("malformed %s=%q", Env, v)
	}
	return s, nil
}

// Bits is k as Spec.Filter.
func (k FilterKey) Bits() int {
	b := 0
	if k.Serves {
		b |= 1
	}
	if k.Proxied {
		b |= 2
	}
	return b
}

// runShim is the shim's whole life, on the main thread (init runs
// there): it execs the target or exits 126.
func runShim(v string) {
	s, err := ParseSpec(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent sandbox shim:", err)
		os.Exit(126)
	}
	fail := func(op string, err error) {
		var errno syscall.Errno
		if !errors.As(err, &errno) {
			errno = syscall.EINVAL
		}
		msg := fmt.Sprintf("E%s\x00%d\x00%v", op, int(errno), err)
		if _, serr := unix.Write(s.Sock, []byte(msg)); serr != nil {
			fmt.Fprintf(os.Stderr, "agent sandbox shim: %s: %v\n", op, err)
		}
		os.Exit(126)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, Env+"=") })
	if err := LoopbackUp(); err != nil {
		fail("loopback", err)
	}
	if s.Listen {
		addr, err := sendListener(s.Sock)
		if err != nil {
			fail("listener", err)
		}
		env = ProxyEnv(env, addr)
	}
	// Nothing of the user namespace's capabilities goes on: no ambient
	// set to carry CAP_NET_ADMIN over the exec, none left in this thread.
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		fail("capabilities", err)
	}
	var none [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		fail("capabilities", err)
	}
	if s.Ruleset >= 0 {
		if err := RestrictThread(s.Ruleset, s.Flags); err != nil {
			fail("landlock", err)
		}
		_ = unix.Close(s.Ruleset)
	}
	if s.Filter >= 0 {
		f, err := UnixFilter(FilterKey{Serves: s.Filter&1 != 0, Proxied: s.Filter&2 != 0})
		if err == nil {
			err = FilterThread(f)
		}
		if err != nil {
			fail("seccomp", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs", err)
	}
	unix.CloseOnExec(s.Sock)
	if s.ExecFD >= 0 {
		unix.CloseOnExec(s.ExecFD)
	}
	fail("exec", syscall.Exec(s.Path, os.Args, env))
}

// sendListener listens on 127.0.0.1:0 and sends the listening socket
// over sock; it returns the address.
func sendListener(sock int) (string, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return "", err
	}
	if err := unix.Listen(fd, unix.SOMAXCONN); err != nil {
		return "", err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return "", err
	}
	in, ok := sa.(*unix.SockaddrInet4)
	if !ok {
		return "", syscall.EAFNOSUPPORT
	}
	if err := unix.Sendmsg(sock, []byte("L"), unix.UnixRights(fd), nil, 0); err != nil {
		return "", err
	}
	return "127.0.0.1:" + strconv.Itoa(in.Port), nil
}
