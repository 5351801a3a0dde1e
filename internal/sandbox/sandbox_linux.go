//go:build linux && !portable

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Status is what this kernel lets the sandbox enforce.
type Status struct {
	ABI      int  // Landlock ABI; 0 = none
	NetNS    bool // a network namespace can be made for a child
	UserNS   bool // through a user namespace (unprivileged)
	ScopeIPC bool // signals and abstract Unix sockets scoped (ABI 6)
	UnixPath bool // pathname Unix sockets restricted (ABI 9)
	UDP      bool // UDP restricted by Landlock itself (ABI 10)
}

// Probe reports the kernel's features, once per process.
func Probe() Status { return probe() }

var probe = sync.OnceValue(func() Status {
	var s Status
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		s.ABI = v
	}
	s.ScopeIPC, s.UnixPath, s.UDP = s.ABI >= 6, s.ABI >= 9, s.ABI >= 10
	s.UserNS = os.Geteuid() != 0
	// Try it: a container or a sysctl may refuse namespaces.
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	netns(cmd.SysProcAttr, s.UserNS)
	s.NetNS = cmd.Run() == nil
	return s
})

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
	if s.ABI > 0 && !s.UnixPath {
		out = append(out, fmt.Sprintf("pathname Unix sockets: reachable by sandboxed code (Landlock ABI %d; 9 restricts them)", s.ABI))
	}
	return out
}

// netns makes attr start its child in a network namespace of its own;
// an unprivileged process needs a user namespace for that. The user
// namespace gets no id mapping: writing one is done by the parent thread
// through /proc/<child>/uid_map, which that (restricted) thread may not
// write; unmapped, the child still acts with its own uid and gid on the
// host's files (it only sees them as the overflow id, 65534) and has no
// capability left after its exec.
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
// knows, less the TCP rules when the host's network is kept.
func (p Policy) config() landlock.Config {
	c := landlock.V11
	if p.HostNetwork() {
		c.HandledAccessNet = 0
	}
	return c.BestEffort()
}

// Start starts cmd, through start (which calls cmd.Start or a wrapper
// of it), confined to p. It returns release, which must be called once
// the child has exited (after Wait): the OS thread that started the child
// stays parked until then.
func Start(cmd *exec.Cmd, p Policy, start func(*exec.Cmd) error) (release func(), err error) {
	fd, flags, err := p.config().NewRulesetFD(p.rules()...)
	if err != nil {
		return nil, fmt.Errorf("sandbox rules: %w", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !p.HostNetwork() && Probe().NetNS {
		netns(cmd.SysProcAttr, Probe().UserNS)
	}
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		// Never unlocked: the restricted thread ends with this goroutine.
		runtime.LockOSThread()
		if fd >= 0 {
			if err := restrictThread(fd, flags); err != nil {
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
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, nil
}

// restrictThread enforces the ruleset on the calling thread only (no
// TSYNC flag), after no_new_privs, which Landlock requires of an
// unprivileged thread and which is also per thread.
func restrictThread(fd int, flags uint32) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	flags &^= ll.FlagRestrictSelfTSync
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	return nil
}
