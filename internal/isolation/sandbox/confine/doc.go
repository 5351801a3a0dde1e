// Package confine confines the calling thread, for internal/sandbox:
// Landlock's restrict_self and the seccomp filter on that thread only,
// and lo set up in its network namespace. It is also the sandbox's shim
// (shim_linux.go): the entry, in its init, of a binary re-executed to
// confine itself before it execs a child's program. It is a package of
// its own, without net/http and the sandbox's other imports, so that
// this init runs among the first of any binary that links the sandbox:
// in agent after 119 of its 323 package inits, not after all of them
// (docs/design.md).
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it. It imports nothing of
// the project, so that its init runs early.
package confine
