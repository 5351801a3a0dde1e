package sandbox

import (
	"errors"
	"path/filepath"
	"strings"
)

var (
	// ErrDeclared: a path of permissions.fs cannot be granted.
	ErrDeclared = errors.New("declared path refused")
	// ErrLink: a path of permissions.fs is, or passes through, a
	// symbolic link; declare the real path.
	ErrLink = errors.New("declared path refused: a symbolic link (declare the real path)")
)

// Policy is what one sandboxed process may reach beyond nothing.
type Policy struct {
	// Read may be read (files, listings) and executed, beneath.
	Read []string
	// Write may be read, written, created and removed, beneath.
	Write []string
	// Move are Write paths where files may also be renamed or linked in
	// from another folder (uv's cache does that).
	Move []string
	// Network is permissions.network: empty means none (a network
	// namespace of its own); "*" means the host's network; host:port
	// entries are reached through a proxy that admits only them, named
	// by HTTP(S)_PROXY in the child's environment (unprivileged through
	// the shim: see shim_linux.go).
	Network []string
	// Serves is set for a child that listens on a Unix socket of its
	// own (a go-plugin plugin): without the host's network it keeps
	// AF_UNIX stream sockets and loses connect(2) instead (see
	// confine/seccomp_linux.go).
	Serves bool
	// Fixed are the paths of Read, Write and Move that a skill declared
	// (Declared): each is opened once when the rules are built, and
	// refused if a symbolic link is anywhere in it (see OpenDeclared),
	// since a skill's code can make links where it may write.
	Fixed []string
}

// SystemLibs are what every dynamically linked program needs to start:
// the loader, the shared libraries and the loader's cache.
var SystemLibs = []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache"}

// System is what scripts and commands get read-only besides their own
// folder: the system's programs and libraries, the few files of /etc that
// name resolution, TLS and user lookups read (not /etc as a whole), and
// /proc, where Landlock's own ptrace rule keeps other processes'
// environ, mem and fds out of reach.
var System = append([]string{"/usr", "/bin", "/sbin",
	"/etc/localtime", "/etc/ssl", "/etc/ca-certificates", "/etc/pki", "/etc/resolv.conf", "/etc/hosts",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/alternatives", "/proc"}, SystemLibs...)

// HostNetwork reports whether the policy keeps the host's network.
func (p Policy) HostNetwork() bool {
	for _, n := range p.Network {
		if n == "*" {
			return true
		}
	}
	return false
}

// PathDirs are the folders of a PATH value, and for each that is a
// toolchain's bin or shims folder (~/go/bin, ~/.pyenv/shims,
// ~/.cargo/bin) the toolchain's root, which its programs read: what a
// command found on PATH needs beyond System.
func PathDirs(path string) []string {
	var out []string
	for _, d := range strings.Split(path, ":") {
		if d == "" || !strings.HasPrefix(d, "/") {
			continue
		}
		out = append(out, d)
		if b := filepath.Base(d); b == "bin" || b == "shims" {
			if root := filepath.Dir(d); root != "/" && root != "/usr" && root != "/usr/local" {
				out = append(out, root)
			}
		}
	}
	return out
}

// Expand resolves one permissions.fs entry: ~ is home, $WORKSPACE the
// workspace and $TMP the per-call temp folder. An entry whose folder is
// unknown ("" for it) resolves to "", which grants nothing.
func Expand(path, home, workspace, tmp string) string {
	root := func(prefix, dir string) (string, bool) {
		if path != prefix && !strings.HasPrefix(path, prefix+"/") {
			return "", false
		}
		if dir == "" {
			return "", true
		}
		return filepath.Join(dir, strings.TrimPrefix(path, prefix)), true
	}
	if p, ok := root("~", home); ok {
		return p
	}
	if p, ok := root("$WORKSPACE", workspace); ok {
		return p
	}
	if p, ok := root("$TMP", tmp); ok {
		return p
	}
	return path
}

// Home is the HOME of an environment ("" when it has none): what ~ means
// in permissions.fs for code started with that environment.
func Home(environ []string) string {
	home := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	return home
}

// Declared is what a skill's SKILL.md grants its code beyond its own
// folder (permissions.fs and permissions.network), resolved by Expand.
//
// The roots (home, workspace, tmp) are the host's, resolved once here;
// what a skill declares beneath them must hold no link and no ".."
// (Fixed): an entry with ".." is kept as written, which Start refuses.
func Declared(read, write, network []string, home, workspace, tmp string) Policy {
	real := func(dir string) string {
		if r, err := filepath.EvalSymlinks(dir); err == nil && dir != "" {
			return r
		}
		return dir
	}
	home, workspace, tmp = real(home), real(workspace), real(tmp)
	var p Policy
	expand := func(paths []string) []string {
		var out []string
		for _, r := range paths {
			e := Expand(r, home, workspace, tmp)
			if hasDotDot(r) {
				e = r
			}
			if e != "" {
				out = append(out, e)
				p.Fixed = append(p.Fixed, e)
			}
		}
		return out
	}
	p.Read = expand(read)
	p.Write = expand(write)
	p.Network = network
	return p
}

// hasDotDot says whether a path has a ".." component.
func hasDotDot(path string) bool {
	for _, c := range strings.Split(path, "/") {
		if c == ".." {
			return true
		}
	}
	return false
}
