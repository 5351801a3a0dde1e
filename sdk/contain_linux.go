//go:build linux && !portable

package sdk

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/agentskills/agent/sdk/internal/proctree"
)

// contain makes the plugin answer for everything it starts, from before
// the plugin's own code runs: it becomes a subreaper, so descendants that
// call setsid stay its own, and when it is told to stop (SIGTERM, SIGHUP)
// or its host dies it kills them all before exiting. The host asked the
// kernel for SIGKILL on its death, which would leave no time for that;
// the request belongs to the thread the host started, our main thread,
// and package initialisation is the one time Go code surely runs there,
// so it is replaced by SIGTERM here.
func contain() {
	_ = proctree.Subreaper()
	proctree.ParentDeathSignal()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		proctree.KillDescendants()
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
}
