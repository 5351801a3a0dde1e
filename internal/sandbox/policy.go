package sandbox

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
	// entries are not reachable yet without "*" (see docs/design.md).
	Network []string
}

// SystemLibs are what every dynamically linked program needs to start:
// the loader, the shared libraries and the loader's cache. Programs run
// by the sandbox get them read-only.
var SystemLibs = []string{"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/etc/ld.so.cache"}

// HostNetwork reports whether the policy keeps the host's network.
func (p Policy) HostNetwork() bool {
	for _, n := range p.Network {
		if n == "*" {
			return true
		}
	}
	return false
}
