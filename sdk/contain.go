package sdk

import "github.com/agentskills/agent/sdk/internal/proctree"

// KillAdopted ends, with all their descendants, and reaps the children of
// this process for which keep returns false. A plugin served by Serve is
// a subreaper (Linux), so an orphaned descendant, such as a daemon that
// called setsid after its parent exited, becomes its child; a plugin that
// starts processes calls this when one of them is done. keep must return
// true for every child something else still waits for (os/exec's). Serve
// already ends every descendant when the plugin stops.
func KillAdopted(keep func(pid int) bool) { proctree.KillAdopted(keep) }
