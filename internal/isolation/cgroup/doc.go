// Package cgroup contains a process tree in a cgroup v2 group of its
// own, below the cgroup of the process that uses it, and ends the whole
// tree with cgroup.kill (SPEC §8 "cgroup v2 first"). Membership in a
// cgroup is kept by the kernel: a descendant that calls setsid, clears
// its environment or renames itself stays inside and dies with the
// group, which process groups and environment markers cannot promise.
//
// The hierarchy is found from /proc/self/cgroup and /proc/self/mountinfo:
// a cgroup2 mount (the unified mount of a hybrid system or the only one of
// a pure v2 system) whose directory for this process is writable by it (a
// subtree delegated to the user, or root's own). Where none is, Detect says
// why and callers fall back to process groups and the subreaper.
//
// A SIGKILLed host writes nothing, so Session starts a watcher: a /bin/sh
// that holds the read end of a pipe the host never writes to, and kills
// the session's cgroup (every plugin and script below it) when the host
// is gone and the pipe reads EOF.
//
// The package is a leaf (it imports nothing of the project) so that the
// host and the bundled plugins share one copy.
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package cgroup
