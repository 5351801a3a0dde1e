//go:build linux && !portable

package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/sandbox/confine"
)

// Status is what this kernel lets the sandbox enforce.
type Status struct {
	ABI      int  // Landlock ABI; 0 = none
	NetNS    bool // a network namespace can be made for a child
	UserNS   bool // through a user namespace (unprivileged)
	ScopeIPC bool // signals and abstract Unix sockets scoped (ABI 6)
	UnixPath bool // pathname Unix sockets restricted (ABI 9)
	UDP      bool // UDP restricted by Landlock itself (ABI 10)
	Seccomp  bool // a seccomp filter denies pathname Unix sockets
}

// Probe reports the kernel's features, once per process, without
// starting a process (`agent check` and the listings start none): as
// root, a throwaway OS thread makes a network namespace of its own; an
// unprivileged process cannot make a user namespace while it has
// threads, so there the sysctls that refuse them are read instead, and
// the first sandboxed start confirms it (netnsStarts).
func Probe() Status { return probe() }

var probe = sync.OnceValue(func() Status {
	var s Status
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		s.ABI = v
	}
	s.ScopeIPC, s.UnixPath, s.UDP = s.ABI >= 6, s.ABI >= 9, s.ABI >= 10
	s.Seccomp = seccompSupported()
	s.UserNS = os.Geteuid() != 0
	if s.UserNS {
		s.NetNS = userNSAllowed()
	} else {
		s.NetNS = onThrowawayThread(func() error { return unix.Unshare(unix.CLONE_NEWNET) }) == nil
	}
	return s
})

// netnsStarts says whether a child can be started in a network namespace
// of its own. It is asked only when something is about to run sandboxed
// and answered once: as root by Probe, unprivileged by starting
// /bin/true the way a sandboxed child starts (a container's seccomp or
// an LSM may refuse what the sysctls allow).
var netnsStarts = sync.OnceValue(func() bool {
	s := Probe()
	if !s.NetNS || !s.UserNS {
		return s.NetNS
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	netns(cmd.SysProcAttr, true)
	return cmd.Run() == nil
})

// onThrowawayThread runs f on an OS thread locked to a goroutine that
// ends without unlocking it, so the runtime ends the thread and whatever
// f changed in it (its namespaces, its Landlock domain) goes with it.
func onThrowawayThread(f func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		done <- f()
	}()
	return <-done
}

// userNSAllowed reads the sysctls that refuse unprivileged user
// namespaces: none allowed, Debian's switch off, or Ubuntu's AppArmor
// restriction (which leaves such a namespace without the capability to
// make a network namespace).
func userNSAllowed() bool {
	read := func(name string) (int, bool) {
		b, err := os.ReadFile(name)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	if n, ok := read("/proc/sys/user/max_user_namespaces"); ok && n == 0 {
		return false
	}
	if n, ok := read("/proc/sys/kernel/unprivileged_userns_clone"); ok && n == 0 {
		return false
	}
	if n, ok := read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && n == 1 {
		return false
	}
	return true
}

// Lines says, one line each, what is not enforced on this kernel: empty
// when the sandbox is complete. For `agent check` and a start's warning.
func (s Status) Lines() []string {
	var out []string
	if s.ABI == 0 {
		out = append(out, "files: not sandboxed (the kernel has no Landlock; Linux 5.13 or later with lsm=landlock has)")
	}
	if !s.NetNS {
		out = append(out, "network: not sandboxed (no network namespace could be made: user namespaces are disabled here)")
	}
	if s.ABI > 0 && !s.ScopeIPC {
		out = append(out, fmt.Sprintf("signals and abstract Unix sockets: not scoped (Landlock ABI %d; 6 has scopes)", s.ABI))
	}
	if !s.UnixPath && !s.Seccomp {
		out = append(out, fmt.Sprintf("pathname Unix sockets: reachable by sandboxed code (no seccomp here, and Landlock ABI %d; 9 restricts them)", s.ABI))
	}
	return out
}

// netns makes attr start its child in a network namespace of its own;
// an unprivileged process needs a user namespace for that. The user
// namespace gets no id mapping: writing one is done by the parent thread
// through /proc/<child>/uid_map, which that (restricted) thread may not
// write; unmapped, the child still acts with its own uid and gid on the
// host's files (it only sees them as the overflow id, 65534) and has no
// capability left after its exec. (The shim's user namespace is
// mapped: it is cloned from an unrestricted thread, see shim_linux.go.)
func netns(attr *syscall.SysProcAttr, user bool) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if user {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
	}
}

// rules turns p into go-landlock rules. Landlock grants directory
// rights on directories only, so files and folders get their own rules.
func (p Policy) rules() []landlock.Rule {
	rs := []landlock.Rule{
		landlock.RWFiles("/dev/null").IgnoreIfMissing(),
		landlock.ROFiles("/dev/zero", "/dev/urandom", "/dev/random").IgnoreIfMissing(),
	}
	add := func(paths []string, dirRule func(...string) landlock.FSRule, fileRule func(...string) landlock.FSRule, extra func(landlock.FSRule) landlock.FSRule) {
		dirs, files := split(paths)
		if len(dirs) > 0 {
			rs = append(rs, extra(dirRule(dirs...)))
		}
		if len(files) > 0 {
			rs = append(rs, extra(fileRule(files...)))
		}
	}
	same := func(r landlock.FSRule) landlock.FSRule { return r }
	add(p.Read, landlock.RODirs, landlock.ROFiles, same)
	add(p.Write, landlock.RWDirs, landlock.RWFiles, landlock.FSRule.WithResolveUnix)
	add(p.Move, landlock.RWDirs, landlock.RWFiles, landlock.FSRule.WithRefer)
	return rs
}

// split sorts the paths that exist into folders and files: a declared
// path that is missing grants nothing (go-landlock would refuse the
// whole ruleset).
func split(paths []string) (dirs, files []string) {
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case err != nil:
		case st.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files
}

// config is the Landlock configuration for p: every right this kernel
// knows, less the TCP rules when the host's network is kept or the child
// gets a network namespace of its own (which holds only its loopback:
// the namespace is the boundary, and Landlock's port rules would only
// deny the child its own 127.0.0.1). Where no namespace can be made,
// the port rules stay, the best this kernel offers.
func (p Policy) config(ownNet bool) landlock.Config {
	c := landlock.V11
	if p.HostNetwork() || ownNet {
		c.HandledAccessNet = 0
	}
	return c.BestEffort()
}

// Start starts cmd, through start (which calls cmd.Start or a wrapper
// of it), confined to p. It returns release, which must be called once
// the child has exited (after Wait): the OS thread that started the child
// stays parked until then.
func Start(cmd *exec.Cmd, p Policy, start func(*exec.Cmd) error) (release func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// As root the starting thread moves to a network namespace of its
	// own and brings its loopback up, and the child inherits both; an
	// unprivileged thread cannot (a user namespace needs a process with
	// one thread), so its child is cloned into a user and a network
	// namespace, where lo stays down (see docs/design.md).
	ownNet := !p.HostNetwork() && netnsStarts()
	threadNet := ownNet && !Probe().UserNS
	hosts := p.Hosts()
	if !ownNet {
		hosts = nil
	}
	// Unprivileged, declared hosts need the shim (shim_linux.go): the
	// child makes the proxy's listener in its own namespace.
	viaShim := ownNet && !threadNet && len(hosts) > 0
	if ownNet && !threadNet {
		netns(cmd.SysProcAttr, true)
	}
	fd, flags, err := p.config(ownNet).NewRulesetFD(p.rules()...)
	if err != nil {
		return nil, fmt.Errorf("sandbox rules: %w", err)
	}
	// Code without the host's network also loses pathname Unix
	// sockets, by a seccomp filter (Landlock restricts them from ABI 9).
	var filter *unix.SockFprog
	var key *confine.FilterKey
	if !p.HostNetwork() && seccompOn() {
		key = &confine.FilterKey{Serves: p.Serves, Proxied: len(hosts) > 0}
		filter, err = confine.UnixFilter(*key)
		if err != nil {
			if fd >= 0 {
				_ = unix.Close(fd)
			}
			return nil, err
		}
	}
	if viaShim {
		return startShim(cmd, fd, flags, key, hosts, start)
	}
	var px *proxy
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Never unlocked: the restricted thread ends with this goroutine.
		runtime.LockOSThread()
		if threadNet {
			if err := loopbackOnly(); err != nil {
				started <- err
				return
			}
		}
		if len(hosts) > 0 {
			// Made on this thread, the listener is in the child's
			// namespace; served by the host's goroutines, it dials
			// from the host's.
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				started <- fmt.Errorf("sandbox: the proxy's listener: %w", err)
				return
			}
			px = serveProxy(l, hosts)
			env := cmd.Env
			if env == nil {
				env = os.Environ()
			}
			cmd.Env = confine.ProxyEnv(env, l.Addr().String())
		}
		if fd >= 0 {
			if err := confine.RestrictThread(fd, flags); err != nil {
				started <- err
				return
			}
		}
		if filter != nil {
			// After the proxy's listener and Landlock: the filter
			// is the last thing this thread does before the child.
			if err := confine.FilterThread(filter); err != nil {
				started <- err
				return
			}
		}
		err := start(cmd)
		started <- err
		if err == nil {
			<-done
		}
	}()
	err = <-started
	if fd >= 0 {
		_ = unix.Close(fd)
	}
	if err != nil {
		if px != nil {
			px.close()
		}
		return nil, err
	}
	return releaseOnce(done, px), nil
}

// releaseOnce is Start's release: it lets the starting thread go (done) and
// closes the proxy, if any, once.
func releaseOnce(done chan struct{}, px *proxy) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			if px != nil {
				px.close()
			}
		})
	}
}

// loopbackOnly moves the calling thread to a new network namespace and
// brings its loopback interface up: the child then has 127.0.0.1 and ::1
// of its own (a test server, a language server on localhost) and nothing
// else.
func loopbackOnly() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("sandbox: unshare(CLONE_NEWNET): %w", err)
	}
	return confine.LoopbackUp()
}
