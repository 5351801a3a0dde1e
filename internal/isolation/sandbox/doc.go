// Package sandbox confines a skill's code (a script, a `base` command, a
// skill plugin) to what its SKILL.md declares (SPEC §8 "Sandbox"):
//
//   - Files by Landlock: read and execute beneath Policy.Read, write
//     beneath Policy.Write, nothing else. The rules are built in the
//     caller with go-landlock (best effort by the kernel's ABI) and
//     enforced on a fresh OS thread, locked to its goroutine, that then
//     starts the child and stays parked until the child has exited. The
//     calling process itself is never restricted: restrict_self without
//     the TSYNC flag covers only the calling thread, and that thread
//     dies with its goroutine. A thread that forks a child must outlive
//     it, because the kernel sends the child its parent-death signal
//     when the forking thread exits.
//   - Signals and abstract Unix sockets by Landlock scopes (ABI 6): the
//     child cannot signal the host (or the cgroup watcher) nor reach an
//     abstract socket outside its domain.
//   - Network by namespace: Landlock's network rules know TCP ports only
//     and leave UDP (until ABI 10), pathname Unix sockets (until ABI 9)
//     and MPTCP open, so undeclared code starts in a network namespace
//     of its own (with a user namespace when unprivileged), where only
//     its loopback is up (as root; unprivileged not even that); "*"
//     keeps the host's network. Declared host:port entries are reached
//     through an HTTP proxy (CONNECT) of the host that admits only them,
//     listening inside the child's namespace and named by HTTP(S)_PROXY
//     in its environment. A declared name reaches public addresses only,
//     dialed as checked; each proxy bounds its tunnels and connections
//     (proxy_linux.go, proxyaddr_linux.go). Unprivileged, that listener is made by a shim,
//     this binary again, which then restricts itself and execs the
//     target (shim_linux.go, confine/shim_linux.go).
//   - Pathname Unix sockets, for code without the host's network, by a
//     seccomp filter on the same thread (Landlock restricts them only
//     from ABI 9): see confine/seccomp_linux.go.
//
// The package imports nothing of the project but its own confine, the
// thread-confining primitives and the shim's entry, kept apart so that
// the entry's init runs early (see confine's doc).
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package sandbox
