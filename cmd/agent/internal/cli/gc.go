package cli

import (
	"math"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// holdGC holds the garbage collector off until the heap nears 1 GiB, from
// the start of main. A listing of 1,000 skills (`tools`, `prompt`, `skill
// list`, `check`) allocates about 5 MB and exits; the collection that the
// default GOGC starts at 4 MB was a fifth of its time (issue 37: `tools`
// 1.61x -> 1.32x `agent version`). Every other command gets the default
// back before it runs (releaseGC): add and sync hold packs of hundreds of
// MB, and mcp, run and catalog serve live long.
func holdGC() {
	gcHeldByMain = true
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(1 << 30)
}

// gcHeldByMain is set once, by Main, before any command runs.
var gcHeldByMain bool

// gcHeld marks the commands that keep holdGC's setting.
const gcHeld = "gc-held"

// releaseGC restores the default collector unless cmd is marked gcHeld.
// Tests that run commands in process (Run, not Main) never hold it.
func releaseGC(cmd *cobra.Command) {
	if gcHeldByMain && cmd.Annotations[gcHeld] == "" {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// holdsGC marks cmd as a short listing that keeps holdGC's setting.
func holdsGC(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[gcHeld] = "yes"
	return cmd
}
