package workspace

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentskills/agent/host"
)

// pluginUse is one registered plugin and when it was last used. Calls hold
// mu for reading; StopIdle takes it for writing only when it is free, so a
// plugin is never stopped under a call.
type pluginUse struct {
	def  host.Plugin
	mu   sync.RWMutex
	last atomic.Int64 // unix nanoseconds of the last call's start or end
}

// begin marks a call in flight; the returned func ends it.
func (u *pluginUse) begin() func() {
	u.mu.RLock()
	u.last.Store(time.Now().UnixNano())
	return func() {
		u.last.Store(time.Now().UnixNano())
		u.mu.RUnlock()
	}
}

// StopIdle stops every running plugin that has had no call in flight for
// at least idle, and returns their names. A stopped plugin starts again on
// its next call, with the same checks as a first start. Long-lived front
// ends (agent mcp) call it from a timer so that a plugin nobody uses does
// not hold memory forever.
func (ws *Workspace) StopIdle(idle time.Duration) []string {
	h, err := ws.lazyHost() // creating a host starts nothing
	if err != nil {
		return nil
	}
	var stopped []string
	cutoff := time.Now().Add(-idle).UnixNano()
	for name, u := range ws.plugins {
		if u.last.Load() > cutoff || h.PID(name) == 0 || !u.mu.TryLock() {
			continue
		}
		if u.last.Load() <= cutoff {
			// Registering the same definition again stops the running
			// process (gracefully) and leaves the next call to start one.
			h.Register(u.def)
			stopped = append(stopped, name)
		}
		u.mu.Unlock()
	}
	return stopped
}

// PluginPID returns the process id of the plugin serving t, or 0 when it is
// not running (for diagnostics and tests).
func (ws *Workspace) PluginPID(t *ToolRef) int {
	if t.Plugin == "" {
		return 0
	}
	h, err := ws.lazyHost()
	if err != nil {
		return 0
	}
	return h.PID(t.Plugin)
}
