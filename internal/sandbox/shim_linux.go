//go:build linux && !portable

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
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
// never a file someone can swap), with shimEnv set: cloned into a user
// and a network namespace from an unrestricted thread, with its own
// uid and gid mapped to themselves and CAP_NET_ADMIN as its one ambient
// capability, it sets lo up, listens on 127.0.0.1:0, sends the listener
// to the host over an inherited SOCK_SEQPACKET socket (SCM_RIGHTS),
// drops every capability, restricts its own thread (no_new_privs,
// Landlock with the ruleset the host built, the seccomp filter) and
// execs the target with HTTP(S)_PROXY set. The host serves the
// listener with the same proxy as root's.
//
// The socket is close-on-exec in the shim, so it ends at the target's
// exec: the host reads the listener, then end of file (the target
// runs) or the reason the shim failed (its errno, as os/exec reports a
// failed exec).

// shimEnv carries the shim's orders (shimSpec) to the re-executed
// binary; the shim removes it before its exec.
const shimEnv = "AGENT_SANDBOX_SHIM"

// shimPath is what the host executes as the shim: the running binary.
const shimPath = "/proc/self/exe"

func init() {
	// Before anything of this binary runs (its main, TestMain): a shim
	// never returns.
	if spec, ok := syscall.Getenv(shimEnv); ok {
		runShim(spec)
	}
}

// shimSpec is what the shim does; encoded as comma-separated fields,
// the target's path last (it may hold commas).
type shimSpec struct {
	ruleset int    // Landlock ruleset fd; -1: none
	flags   uint32 // landlock_restrict_self's flags
	sock    int    // the socket to the host
	filter  int    // seccomp filter: -1 none, else filterKey bits
	listen  bool   // make the proxy's listener
	execFD  int    // the target's fd when path is /proc/self/fd/N (closed at its exec); -1: none
	path    string // the target
}

func (s shimSpec) String() string {
	return fmt.Sprintf("%d,%d,%d,%d,%t,%d,%s", s.ruleset, s.flags, s.sock, s.filter, s.listen, s.execFD, s.path)
}

func parseShimSpec(v string) (shimSpec, error) {
	f := strings.SplitN(v, ",", 7)
	if len(f) != 7 || f[6] == "" {
		return shimSpec{}, fmt.Errorf("malformed %s=%q", shimEnv, v)
	}
	var s shimSpec
	var errs [6]error
	s.ruleset, errs[0] = strconv.Atoi(f[0])
	flags, err := strconv.ParseUint(f[1], 10, 32)
	s.flags, errs[1] = uint32(flags), err
	s.sock, errs[2] = strconv.Atoi(f[2])
	s.filter, errs[3] = strconv.Atoi(f[3])
	s.listen, errs[4] = strconv.ParseBool(f[4])
	s.execFD, errs[5] = strconv.Atoi(f[5])
	s.path = f[6]
	if err := errors.Join(errs[:]...); err != nil || s.sock < 3 || s.ruleset < -1 || s.execFD < -1 || s.filter < -1 || s.filter > 3 {
		return shimSpec{}, fmt.Errorf("malformed %s=%q", shimEnv, v)
	}
	return s, nil
}

func (k filterKey) bits() int {
	b := 0
	if k.serves {
		b |= 1
	}
	if k.proxied {
		b |= 2
	}
	return b
}

// runShim is the shim's whole life, on the main thread (init runs
// there): it execs the target or exits 126.
func runShim(v string) {
	s, err := parseShimSpec(v)
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
		if _, serr := unix.Write(s.sock, []byte(msg)); serr != nil {
			fmt.Fprintf(os.Stderr, "agent sandbox shim: %s: %v\n", op, err)
		}
		os.Exit(126)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, shimEnv+"=") })
	if err := loopbackUp(); err != nil {
		fail("loopback", err)
	}
	if s.listen {
		addr, err := sendListener(s.sock)
		if err != nil {
			fail("listener", err)
		}
		env = proxyEnv(env, addr)
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
	if s.ruleset >= 0 {
		if err := restrictThread(s.ruleset, s.flags); err != nil {
			fail("landlock", err)
		}
		_ = unix.Close(s.ruleset)
	}
	if s.filter >= 0 {
		f, err := unixFilter(filterKey{serves: s.filter&1 != 0, proxied: s.filter&2 != 0})
		if err == nil {
			err = filterThread(f)
		}
		if err != nil {
			fail("seccomp", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail("no_new_privs", err)
	}
	unix.CloseOnExec(s.sock)
	if s.execFD >= 0 {
		unix.CloseOnExec(s.execFD)
	}
	fail("exec", syscall.Exec(s.path, os.Args, env))
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
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(in.Port)), nil
}

// Shimmed says whether Start made cmd's process a shim: it then execs
// twice, the shim (this binary) first and the target second, which a
// launch check that stops the child at exec must follow (host's
// startCmd).
func Shimmed(cmd *exec.Cmd) bool {
	return cmd.Path == shimPath && slices.ContainsFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, shimEnv+"=") })
}

// startShim starts cmd through the shim, in a user and a network
// namespace of its own, with hosts served by a proxy listening in it.
// ruleset (or -1) and filter (or nil) are what the shim enforces on
// itself before its exec. The thread that clones the shim is not
// restricted (it writes the shim's uid and gid maps); it stays parked,
// as Start's does, until release.
func startShim(cmd *exec.Cmd, ruleset int, flags uint32, filter *filterKey, hosts []string, start func(*exec.Cmd) error) (release func(), err error) {
	var rulesetFile *os.File
	if ruleset >= 0 {
		rulesetFile = os.NewFile(uintptr(ruleset), "landlock-ruleset")
		defer rulesetFile.Close()
	}
	spec := shimSpec{ruleset: -1, filter: -1, execFD: -1, listen: len(hosts) > 0, path: cmd.Path, flags: flags}
	extra := slices.Clone(cmd.ExtraFiles)
	// A target executed by one of this process's descriptors (a sealed
	// copy: /proc/self/fd/N, close-on-exec) would be gone by the
	// shim's exec: the shim gets its own copy, and closes it at the
	// target's exec.
	if n, ok := strings.CutPrefix(cmd.Path, "/proc/self/fd/"); ok {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 3+len(extra) {
			dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
			if err != nil {
				return nil, fmt.Errorf("sandbox: the target's descriptor: %w", err)
			}
			f := os.NewFile(uintptr(dup), cmd.Path)
			defer f.Close()
			spec.execFD = 3 + len(extra)
			spec.path = fmt.Sprintf("/proc/self/fd/%d", spec.execFD)
			extra = append(extra, f)
		}
	}
	if rulesetFile != nil {
		spec.ruleset = 3 + len(extra)
		extra = append(extra, rulesetFile)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the shim's socket: %w", err)
	}
	hostEnd, childEnd := os.NewFile(uintptr(pair[0]), "shim"), os.NewFile(uintptr(pair[1]), "shim")
	defer hostEnd.Close()
	spec.sock = 3 + len(extra)
	extra = append(extra, childEnd)
	if filter != nil {
		spec.filter = filter.bits()
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, shimEnv+"=") }), shimEnv+"="+spec.String())
	target := cmd.Path
	if len(cmd.Args) == 0 {
		cmd.Args = []string{target} // what os/exec would pass as argv
	}
	cmd.Path, cmd.Env, cmd.ExtraFiles = shimPath, env, extra
	attr := cmd.SysProcAttr
	netns(attr, true)
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)

	var px *proxy
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Never unlocked: the child's parent-death signal and its
		// tracer (the check at exec) are this thread.
		runtime.LockOSThread()
		err := start(cmd)
		childEnd.Close()
		if err != nil {
			// The shim's own reason (a failed exec's errno) first.
			l, serr := readShim(hostEnd, target, false)
			if l != nil {
				l.Close()
			}
			if serr != nil {
				err = serr
			}
			started <- err
			return
		}
		l, err := readShim(hostEnd, target, spec.listen)
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			started <- err
			return
		}
		if l != nil {
			px = serveProxy(l, hosts)
		}
		started <- nil
		<-done
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			if px != nil {
				px.close()
			}
		})
	}, nil
}

// readShim reads what the shim says until its end of the socket
// closes: with listen, the listener first; then nothing (the target
// runs) or the shim's error.
func readShim(sock *os.File, target string, listen bool) (net.Listener, error) {
	fd := int(sock.Fd())
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	var l net.Listener
	fail := func(err error) (net.Listener, error) {
		if l != nil {
			l.Close()
		}
		return nil, err
	}
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("sandbox: read the shim: %w", err))
		}
		fds := receivedFDs(oob[:oobn])
		switch {
		case n == 0 && oobn == 0:
			if listen && l == nil {
				return fail(errors.New("sandbox: the shim ended before it sent the proxy's listener"))
			}
			return l, nil
		case n > 0 && buf[0] == 'L' && len(fds) == 1 && l == nil:
			f := os.NewFile(uintptr(fds[0]), "proxy")
			l, err = net.FileListener(f)
			f.Close()
			if err != nil {
				return fail(fmt.Errorf("sandbox: the proxy's listener: %w", err))
			}
		case n > 0 && buf[0] == 'E':
			for _, fd := range fds {
				_ = unix.Close(fd)
			}
			return fail(shimError(string(buf[1:n]), target))
		default:
			for _, fd := range fds {
				_ = unix.Close(fd)
			}
			return fail(fmt.Errorf("sandbox: the shim sent %q", buf[:n]))
		}
	}
}

func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if r, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, r...)
		}
	}
	return fds
}

// shimError is the error the shim reported ("op\x00errno\x00text"): a
// failed exec reads as os/exec's own (fork/exec path: errno), so that
// callers match its errno (ETXTBSY) as they do without the shim.
func shimError(msg, target string) error {
	f := strings.SplitN(msg, "\x00", 3)
	if len(f) != 3 {
		return fmt.Errorf("sandbox shim: %q", msg)
	}
	n, _ := strconv.Atoi(f[1])
	errno := syscall.Errno(n)
	if f[0] == "exec" {
		return &fs.PathError{Op: "fork/exec", Path: target, Err: errno}
	}
	// Not wrapped: an EPERM here is the sandbox's, not a refused
	// PTRACE_TRACEME's, which the plugin runner matches.
	return fmt.Errorf("sandbox shim: %s: %s", f[0], f[2])
}
