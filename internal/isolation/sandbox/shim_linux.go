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
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/isolation/sandbox/confine"
)

// Every sandboxed child starts through the shim: the child is first
// this binary again, whose init (internal/sandbox/confine) sets up its
// namespaces, hands the proxy's listener over, confines itself and runs
// the target. See confine/shim_linux.go and docs/design.md.

// shimPath is what the host executes as the shim: the running binary.
const shimPath = "/proc/self/exe"

// Shim says how a command's process runs its target, for a launch check
// that stops the child at exec and must find the target's exec (host's
// startCmd).
type Shim int

const (
	NoShim   Shim = iota // the command's process is its target
	ShimExec             // the shim execs the target in its own place: two execs
	ShimFork             // the shim forks, and its child execs the target
)

// Shimmed says how Start made cmd's process run its target.
func Shimmed(cmd *exec.Cmd) Shim {
	if cmd.Path != shimPath {
		return NoShim
	}
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, confine.Env+"="); ok {
			if s, err := confine.ParseSpec(v); err == nil && s.NS {
				return ShimFork
			}
			return ShimExec
		}
	}
	return NoShim
}

// shim is how Start runs one child.
type shim struct {
	ns, net bool     // namespaces of its own; a network namespace too
	hosts   []string // declared hosts, served by a proxy in its namespace
	ruleset int      // Landlock ruleset (-1: none), closed by start
	flags   uint32
	proc    uint64 // Landlock rights on its private /proc
	filter  int    // seccomp: confine.FilterKey.Bits, -1 none
}

// start starts cmd through the shim with start. The thread that clones
// the shim is not restricted (it writes the shim's uid and gid maps); it
// stays parked, the shim's parent and tracer, until release.
func (sh shim) start(cmd *exec.Cmd, start func(*exec.Cmd) error) (release func(), err error) {
	var rulesetFile *os.File
	if sh.ruleset >= 0 {
		rulesetFile = os.NewFile(uintptr(sh.ruleset), "landlock-ruleset")
		defer rulesetFile.Close()
	}
	spec := confine.Spec{Ruleset: -1, Filter: sh.filter, ExecFD: -1, Listen: len(sh.hosts) > 0, NS: sh.ns, Net: sh.net, Proc: sh.proc, Path: cmd.Path, Flags: sh.flags}
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
			spec.ExecFD = 3 + len(extra)
			spec.Path = fmt.Sprintf("/proc/self/fd/%d", spec.ExecFD)
			extra = append(extra, f)
		}
	}
	if rulesetFile != nil {
		spec.Ruleset = 3 + len(extra)
		extra = append(extra, rulesetFile)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the shim's socket: %w", err)
	}
	hostEnd, childEnd := os.NewFile(uintptr(pair[0]), "shim"), os.NewFile(uintptr(pair[1]), "shim")
	defer hostEnd.Close()
	spec.Sock = 3 + len(extra)
	extra = append(extra, childEnd)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, confine.Env+"=") }), confine.Env+"="+spec.String())
	target := cmd.Path
	if len(cmd.Args) == 0 {
		cmd.Args = []string{target} // what os/exec would pass as argv
	}
	cmd.Path, cmd.Env, cmd.ExtraFiles = shimPath, env, extra
	if sh.ns {
		namespaces(cmd.SysProcAttr, sh.net)
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}

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
		l, err := readShim(hostEnd, target, spec.Listen)
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			started <- err
			return
		}
		if l != nil {
			px = serveProxy(l, sh.hosts)
		}
		started <- nil
		<-done
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return releaseOnce(done, px), nil
}

// namespaces makes attr clone the shim into user, PID, mount, IPC and
// UTS namespaces of its own, and a network one with net. Its uid and
// gid map to themselves: root's child stays uid 0, so that it can write
// what root owns in a workspace, with no capability over anything
// outside its namespaces (docs/design.md); a user's shim gets the
// capabilities of its setup as ambient ones (its uid is not 0 inside).
func namespaces(attr *syscall.SysProcAttr, net bool) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if net {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.AmbientCaps = append(attr.AmbientCaps, confine.SetupCaps...)
}

// probeShim starts the shim in every namespace, up to its private
// /proc, and says why it failed, if it did.
func probeShim() error {
	if forceFallback {
		return errors.New("AGENT_SANDBOX=fallback")
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	hostEnd, childEnd := os.NewFile(uintptr(pair[0]), "shim"), os.NewFile(uintptr(pair[1]), "shim")
	defer hostEnd.Close()
	spec := confine.Spec{Ruleset: -1, Filter: -1, ExecFD: -1, Sock: 3, NS: true, Net: true}
	cmd := &exec.Cmd{Path: shimPath, Args: []string{"agent-sandbox-probe"}, Env: []string{confine.Env + "=" + spec.String()}, ExtraFiles: []*os.File{childEnd}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	namespaces(cmd.SysProcAttr, true)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	go func() {
		// Never unlocked: the thread, the shim's parent, ends after
		// the shim (its parent-death signal).
		runtime.LockOSThread()
		err := cmd.Start()
		childEnd.Close()
		if err != nil {
			done <- fmt.Errorf("clone into namespaces: %w", err)
			return
		}
		_, serr := readShim(hostEnd, "", false)
		werr := cmd.Wait()
		switch {
		case serr != nil:
			done <- serr
		case werr != nil:
			done <- fmt.Errorf("the sandbox shim: %v %s", werr, strings.TrimSpace(stderr.String()))
		default:
			done <- nil
		}
	}()
	return <-done
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

// Signaled says which signal ended the target of a command that Start
// ran through the shim in namespaces, once it has been waited for: the
// shim, init of the target's PID namespace, cannot die by a signal it
// passes on, so it exits 128+n, as a shell does.
func Signaled(cmd *exec.Cmd) (syscall.Signal, bool) {
	if cmd.ProcessState == nil || Shimmed(cmd) != ShimFork {
		return 0, false
	}
	if c := cmd.ProcessState.ExitCode(); c > 128 && c <= 128+64 {
		return syscall.Signal(c - 128), true
	}
	return 0, false
}
