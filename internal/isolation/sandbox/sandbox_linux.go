//go:build linux && !portable

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/isolation/sandbox/confine"
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
	// NS says children start in namespaces of their own (user, PID,
	// mount, IPC, UTS, network) with a private /proc; where that is
	// refused, NSRefused says why and the fallback is in force (every
	// capability dropped, no_new_privs, seccomp and Landlock, but the
	// host's /proc and PID namespace, and no network namespace). Known
	// once NSProbe has run: Probe alone starts no process.
	NS        bool
	NSRefused string
}

// Probe reports the kernel's features, once per process, without
// starting a process (`agent check` and the listings start none): a
// process with threads cannot make a user namespace, so the sysctls
// that refuse them are read instead, and the first sandboxed start
// confirms it (NSProbe).
func Probe() Status { return probe() }

var probe = sync.OnceValue(func() Status {
	var s Status
	if v, err := ll.LandlockGetABIVersion(); err == nil {
		s.ABI = v
	}
	s.ScopeIPC, s.UnixPath, s.UDP = s.ABI >= 6, s.ABI >= 9, s.ABI >= 10
	s.Seccomp = seccompSupported()
	s.UserNS = os.Geteuid() != 0
	s.NetNS = userNSAllowed()
	s.NS = s.NetNS
	if !s.NS {
		s.NSRefused = "user namespaces are disabled here"
	} else if m := procMasked(); m != "" {
		s.NS, s.NetNS = false, false
		s.NSRefused = "the host's /proc has masked paths (" + m + ", as in a container), so a private /proc cannot be mounted"
	}
	return s
})

// procMasked names a mount over a path inside /proc (a container masks
// /proc/kcore and the like), which makes the kernel refuse a new proc
// mount in a user namespace; binfmt_misc, on an empty folder of /proc,
// does not.
func procMasked() string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if mp := f[4]; strings.HasPrefix(mp, "/proc/") && mp != "/proc/sys/fs/binfmt_misc" {
			return mp
		}
	}
	return ""
}

// NSProbe is Probe, with NS confirmed by starting the shim once the way
// a sandboxed child starts, in every namespace, up to its private /proc
// (a container's seccomp profile, an LSM or a masked /proc may refuse
// what the sysctls allow). It runs once per process, when something is
// about to run sandboxed, or for `agent check`.
func NSProbe() Status { return nsProbe() }

var nsProbe = sync.OnceValue(func() Status {
	s := Probe()
	if !s.NS {
		return s
	}
	if err := probeShim(); err != nil {
		s.NS, s.NetNS, s.NSRefused = false, false, err.Error()
	}
	return s
})

// forceFallback makes NSProbe report namespaces refused, so that the
// fallback runs where namespaces work (tests, AGENT_SANDBOX=fallback).
var forceFallback = os.Getenv("AGENT_SANDBOX") == "fallback"

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
	if !s.NS && s.NSRefused != "" {
		out = append(out, "processes: no namespaces of their own ("+s.NSRefused+"): sandboxed code sees the host's /proc and processes; every capability is still dropped, with no_new_privs, seccomp and Landlock")
	}
	if !s.NetNS {
		out = append(out, "network: not sandboxed (no network namespace could be made: "+s.NSRefused+")")
	}
	if s.ABI > 0 && !s.ScopeIPC {
		out = append(out, fmt.Sprintf("signals and abstract Unix sockets: not scoped (Landlock ABI %d; 6 has scopes)", s.ABI))
	}
	if !s.UnixPath && !s.Seccomp {
		out = append(out, fmt.Sprintf("pathname Unix sockets: reachable by sandboxed code (no seccomp here, and Landlock ABI %d; 9 restricts them)", s.ABI))
	}
	return out
}

// rules turns p into go-landlock rules. Landlock grants directory
// rights on directories only, so files and folders get their own rules.
// A declared path (Policy.Fixed) is opened here, once, refusing a
// symbolic link anywhere in it, and the rule names the opened file
// (/proc/self/fd/N), so that what was checked is what is granted: a
// link swapped in later changes nothing. closeRules closes those files
// once the ruleset is built.
func (p Policy) rules() (rs []landlock.Rule, closeRules func(), err error) {
	rs = []landlock.Rule{
		landlock.RWFiles("/dev/null").IgnoreIfMissing(),
		landlock.ROFiles("/dev/zero", "/dev/urandom", "/dev/random").IgnoreIfMissing(),
	}
	var opened []*os.File
	closeRules = func() {
		for _, f := range opened {
			f.Close()
		}
	}
	fixed := map[string]bool{}
	for _, f := range p.Fixed {
		fixed[f] = true
	}
	add := func(paths []string, dirRule func(...string) landlock.FSRule, fileRule func(...string) landlock.FSRule, extra func(landlock.FSRule) landlock.FSRule) error {
		var dirs, files []string
		for _, path := range paths {
			if !fixed[path] {
				switch st, err := os.Stat(path); {
				case err != nil: // missing: grants nothing (go-landlock would refuse the whole ruleset)
				case st.IsDir():
					dirs = append(dirs, path)
				default:
					files = append(files, path)
				}
				continue
			}
			f, isDir, err := OpenDeclared(path)
			if err != nil {
				return err
			}
			if f == nil {
				continue
			}
			opened = append(opened, f)
			byFD := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
			if isDir {
				dirs = append(dirs, byFD)
			} else {
				files = append(files, byFD)
			}
		}
		if len(dirs) > 0 {
			rs = append(rs, extra(dirRule(dirs...)))
		}
		if len(files) > 0 {
			rs = append(rs, extra(fileRule(files...)))
		}
		return nil
	}
	same := func(r landlock.FSRule) landlock.FSRule { return r }
	err = errors.Join(
		add(p.Read, landlock.RODirs, landlock.ROFiles, same),
		add(p.Write, landlock.RWDirs, landlock.RWFiles, landlock.FSRule.WithResolveUnix),
		add(p.Move, landlock.RWDirs, landlock.RWFiles, landlock.FSRule.WithRefer))
	if err != nil {
		closeRules()
		return nil, nil, err
	}
	return rs, closeRules, nil
}

// OpenDeclared opens a declared path (permissions.fs, resolved by
// Expand) with O_PATH, refusing ".." and a symbolic link in any of its
// components (ErrLink, naming the link); a missing path is (nil, false,
// nil): it grants nothing.
func OpenDeclared(path string) (f *os.File, isDir bool, err error) {
	if !filepath.IsAbs(path) || hasDotDot(path) {
		return nil, false, fmt.Errorf("%w: %q: declare an absolute path without ..", ErrDeclared, path)
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case err == unix.ENOENT || err == unix.ENOTDIR:
		return nil, false, nil
	case err == unix.ELOOP:
		return nil, false, fmt.Errorf("%w: %s", ErrLink, linkIn(path))
	case err == unix.ENOSYS:
		return openDeclaredWalk(path)
	case err != nil:
		return nil, false, fmt.Errorf("%w: open %s: %w", ErrDeclared, path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, false, fmt.Errorf("%w: stat %s: %w", ErrDeclared, path, err)
	}
	return os.NewFile(uintptr(fd), path), st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// openDeclaredWalk is OpenDeclared for kernels before openat2 (5.6):
// component by component with O_NOFOLLOW.
func openDeclaredWalk(path string) (*os.File, bool, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, false, fmt.Errorf("%w: open /: %w", ErrDeclared, err)
	}
	var st unix.Stat_t
	done := "/"
	for _, c := range strings.Split(strings.Trim(path, "/"), "/") {
		if c == "" || c == "." {
			continue
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		unix.Close(fd)
		if err == unix.ENOENT || err == unix.ENOTDIR {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("%w: open %s: %w", ErrDeclared, path, err)
		}
		fd, done = next, filepath.Join(done, c)
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return nil, false, fmt.Errorf("%w: stat %s: %w", ErrDeclared, done, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			target, _ := os.Readlink(done)
			return nil, false, fmt.Errorf("%w: %s -> %s", ErrLink, done, target)
		}
	}
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, false, fmt.Errorf("%w: stat %s: %w", ErrDeclared, path, err)
	}
	return os.NewFile(uintptr(fd), path), st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

// linkIn names the first symbolic link in path, for the error.
func linkIn(path string) string {
	done := "/"
	for _, c := range strings.Split(strings.Trim(path, "/"), "/") {
		done = filepath.Join(done, c)
		if fi, err := os.Lstat(done); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(done)
			return done + " -> " + target
		}
	}
	return path
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
// of it), confined to p: through the shim (shim_linux.go), in
// namespaces of its own where this kernel allows them (NSProbe). It
// returns release, which must be called once the child has exited
// (after Wait): the OS thread that started the child, never itself
// restricted, stays parked until then, since the kernel sends the
// child its parent-death signal when that thread exits.
func Start(cmd *exec.Cmd, p Policy, start func(*exec.Cmd) error) (release func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	st := NSProbe()
	ownNet := !p.HostNetwork() && st.NS
	hosts := p.Hosts()
	if !ownNet {
		hosts = nil
	}
	rules, closeRules, err := p.rules()
	if err != nil {
		return nil, err
	}
	fd, flags, err := p.config(ownNet).NewRulesetFD(rules...)
	closeRules()
	if err != nil {
		return nil, fmt.Errorf("sandbox rules: %w", err)
	}
	sh := shim{ns: st.NS, net: ownNet, hosts: hosts, ruleset: fd, flags: flags, filter: -1}
	if fd >= 0 && slices.Contains(p.Read, "/proc") {
		sh.proc = ll.AccessFSReadFile | ll.AccessFSReadDir
	}
	if seccompOn() {
		sh.filter = confine.FilterKey{Unix: !p.HostNetwork(), Serves: p.Serves, Proxied: len(hosts) > 0}.Bits()
	}
	return sh.start(cmd, start)
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
