//go:build linux && portable

package sdk

// contain does nothing with the portable tag, as on macOS: there is no
// subreaper or parent-death signal to set up, and no tree to walk on
// SIGTERM, so a plugin that starts processes holds them itself
// (procgroup's process groups, stopped from its own signal handler);
// one here that exited at once on SIGTERM would race that handler and
// leave the groups running.
func contain() {}
