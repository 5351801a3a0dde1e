package sandbox

import (
	"path/filepath"
	"strings"
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
func Declared(read, write, network []string, home, workspace, tmp string) Policy {
	var p Policy
	for _, r := range read {
		if e := Expand(r, home, workspace, tmp); e != "" {
			p.Read = append(p.Read, e)
		}
	}
	for _, w := range write {
		if e := Expand(w, home, workspace, tmp); e != "" {
			p.Write = append(p.Write, e)
		}
	}
	p.Network = network
	return p
}
