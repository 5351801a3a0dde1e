// Package procgroup runs the commands of the bundled plugins (exec's
// scripts, base's exec and shell_command) each in a process group of its
// own, and ends the whole group, with whatever the command left behind,
// when the command ends, times out or its call is cancelled. Both plugins
// are sdk skills; the sdk itself makes a plugin a subreaper and ends every
// descendant when the plugin stops (sdk/internal/proctree), so this
// package only adds what a plugin that starts commands needs per command.
// It lives in the root module's internal/ so that the sdk, a module of
// its own that plugin authors import, does not grow an API for it.
//
// Group is the one interface to containment on every platform, for the
// host's plugins and the plugins' commands alike: New before the command
// starts, Started right after, Kill, WaitExit, Release. What holds the group
// together differs (see Protections):
//   - Linux: a process group, a parent-death signal, and the sdk's
//     subreaper for descendants that leave the group (setsid).
//   - macOS, and Linux built with the portable tag: a process group, and a
//     parent watch (polling) instead of the parent-death signal. A
//     descendant that calls setsid leaves the group and can outlive it.
//   - Windows: a Job Object with kill-on-close. os/exec cannot start a
//     process inside a job, so the child starts suspended, is assigned to
//     the job, then resumed; everything it starts is in the job too.
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package procgroup
