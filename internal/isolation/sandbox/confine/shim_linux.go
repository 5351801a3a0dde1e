//go:build linux && !portable

package confine

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The shim is how every sandboxed child starts (docs/design.md, "The
// shim"), as root and as a user alike. The host never restricts itself
// or any of its threads: a restricted host thread would share the
// child's Landlock domain, inside which Landlock allows ptrace. So the
// child is first this binary again (/proc/self/exe: the running agent,
// or the test binary, never a file someone can swap), with Env set, and
// it confines itself before it runs the target.
//
// Where namespaces can be made (Spec.NS), the host clones the shim into
// new user, PID, mount, IPC and UTS namespaces, and a network namespace
// unless the skill keeps the host's network (Spec.Net), with its own uid
// and gid mapped to themselves (root stays uid 0: see docs/design.md)
// and the capabilities it needs for the setup as ambient ones. The shim
// makes its mounts private, mounts a /proc of its own PID namespace
// (only its own processes; /proc/sys read-only) and grants it to the
// target read-only in the ruleset, sets lo up, makes the proxy's
// listener and sends it to the host over an inherited SOCK_SEQPACKET
// socket (SCM_RIGHTS). It then drops every capability (ambient,
// bounding, effective, permitted, inheritable), sets no_new_privs,
// restricts its main thread (Landlock with the ruleset the host built,
// the seccomp filter), makes itself undumpable and forks the target
// from that thread, which inherits all of it. It stays as pid 1: it
// reaps, passes signals on, and exits with the target's status; when
// it ends, the kernel ends every process of its PID namespace, so no
// daemon outlives a call, with or without cgroups.
//
// Where namespaces are refused (a container's seccomp profile, a masked
// /proc), the shim does the same drops and restrictions and execs the
// target in its own place (Spec.NS false).
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
	NS      bool   // in namespaces of its own: private /proc, stay as pid 1
	Net     bool   // in a network namespace of its own: set lo up
	Proc    uint64 // Landlock rights to grant on the private /proc; 0: none
	Path    string // the target; "" with NS: set up, then exit 0 (a probe)
}

const specFields = 10

func (s Spec) String() string {
	return fmt.Sprintf("%d,%d,%d,%d,%t,%d,%t,%t,%d,%s", s.Ruleset, s.Flags, s.Sock, s.Filter, s.Listen, s.ExecFD, s.NS, s.Net, s.Proc, s.Path)
}

// ParseSpec reads what Spec.String wrote.
func ParseSpec(v string) (Spec, error) {
	f := strings.SplitN(v, ",", specFields)
	if len(f) != specFields {
		return Spec{}, fmt.Errorf("malformed %s=%q", Env, v)
	}
	var s Spec
	var errs [9]error
	s.Ruleset, errs[0] = strconv.Atoi(f[0])
	flags, err := strconv.ParseUint(f[1], 10, 32)
	s.Flags, errs[1] = uint32(flags), err
	s.Sock, errs[2] = strconv.Atoi(f[2])
	s.Filter, errs[3] = strconv.Atoi(f[3])
	s.Listen, errs[4] = strconv.ParseBool(f[4])
	s.ExecFD, errs[5] = strconv.Atoi(f[5])
	s.NS, errs[6] = strconv.ParseBool(f[6])
	s.Net, errs[7] = strconv.ParseBool(f[7])
	s.Proc, errs[8] = strconv.ParseUint(f[8], 10, 64)
	s.Path = f[9]
	if err := errors.Join(errs[:]...); err != nil || s.Sock < 3 || s.Ruleset < -1 || s.ExecFD < -1 || s.Filter < -1 || s.Filter >= 1<<filterBits || (s.Path == "" && !s.NS) {
		return Spec{}, fmt.Errorf("malformed %s=%q", Env, v)
	}
	// strconv accepts forms (+1, 01, T) that String does not write:
	// one spelling for each spec.
	if s.String() != v {
		return Spec{}, fmt.Errorf("malformed %s=%q", Env, v)
	}
	return s, nil
}

// SetupCaps are the capabilities the shim needs, in its own user
// namespace, for its setup: its mounts, lo, and dropping the bounding
// set. A user's shim gets them as ambient capabilities (root's has all).
var SetupCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}

// runShim is the shim's whole life, on the main thread (init runs
// there, locked to it): it runs the target or exits 126.
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
	if s.NS {
		if err := privateProc(s.Ruleset, s.Proc); err != nil {
			fail("proc", err)
		}
	}
	if s.Net {
		if err := LoopbackUp(); err != nil {
			fail("loopback", err)
		}
	}
	if s.Listen {
		addr, err := sendListener(s.Sock)
		if err != nil {
			fail("listener", err)
		}
		env = ProxyEnv(env, addr)
	}
	if s.NS && s.Path == "" {
		os.Exit(0) // the probe: every step above worked
	}
	if err := DropCaps(); err != nil {
		fail("capabilities", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs", err)
	}
	if s.Ruleset >= 0 {
		if err := RestrictThread(s.Ruleset, s.Flags); err != nil {
			fail("landlock", err)
		}
		_ = unix.Close(s.Ruleset)
	}
	if s.Filter >= 0 {
		f, err := Filter(KeyOf(s.Filter))
		if err == nil {
			err = FilterThread(f)
		}
		if err != nil {
			fail("seccomp", err)
		}
	}
	unix.CloseOnExec(s.Sock)
	if s.ExecFD >= 0 {
		unix.CloseOnExec(s.ExecFD)
	}
	if !s.NS {
		fail("exec", syscall.Exec(s.Path, os.Args, env))
	}
	// Nothing the target may touch: /proc/1 of its namespace is this
	// process, whose other threads were never restricted.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fail("dumpable", err)
	}
	os.Exit(initTarget(s.Path, env, s.Sock, func(err error) { fail("exec", err) }))
}

// privateProc makes the shim's mounts private and mounts a /proc of its
// PID namespace over the host's, with /proc/sys read-only; with rights,
// it grants them beneath the new /proc in ruleset (the host's rule for
// /proc names the host's, another file system).
func privateProc(ruleset int, rights uint64) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := unix.Mount("/proc/sys", "/proc/sys", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind /proc/sys: %w", err)
	}
	if err := unix.Mount("", "/proc/sys", "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("make /proc/sys read-only: %w", err)
	}
	if ruleset < 0 || rights == 0 {
		return nil
	}
	fd, err := unix.Open("/proc", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("open /proc: %w", err)
	}
	defer unix.Close(fd)
	if err := ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: fd}, 0); err != nil {
		return fmt.Errorf("grant /proc: %w", err)
	}
	return nil
}

// DropCaps leaves the calling thread no capability in any set: ambient
// cleared, the bounding set emptied (so that no exec, not even root's,
// gains one back) and, where this thread may, root's securebits locked;
// then effective, permitted and inheritable emptied. Without
// CAP_SETPCAP (a user outside a namespace) the bounding set cannot be
// dropped, and no_new_privs keeps it from mattering.
func DropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EPERM && err != unix.EINVAL {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	// SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP and SECBIT_KEEP_CAPS off,
	// each locked: uid 0 gains nothing at exec (needs CAP_SETPCAP).
	const secure = 1<<0 | 1<<1 | 1<<2 | 1<<3 | 1<<5
	_ = unix.Prctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0)
	var none [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// lastCap is the kernel's highest capability number.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && n < 64 {
			return n
		}
	}
	return 63
}

// initTarget forks path from the calling (main, restricted) thread and
// is its PID namespace's init until it exits: it passes the signals it
// is sent on to the target, reaps every orphan, and returns the
// target's exit status (128+n for a signal n, as a shell says). Once the
// target runs (ForkExec returns after its exec), sock is closed: the
// host reads its end of file as "the target runs".
func initTarget(path string, env []string, sock int, failExec func(error)) int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT)
	pid, err := syscall.ForkExec(path, os.Args, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2}})
	if err != nil {
		failExec(err)
	}
	_ = unix.Close(sock)
	go func() {
		for sig := range sigs {
			_ = unix.Kill(pid, sig.(syscall.Signal))
		}
	}()
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 126
		}
		if wpid != pid {
			continue
		}
		switch {
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
	}
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
