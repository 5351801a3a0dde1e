package base

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/sdk"
)

// Main is the whole of `agent __plugin base`: it reads Config from
// ConfigEnv and serves the skill until the host closes it. It returns 1
// when the configuration is missing or malformed, or the host is already
// gone.
func Main() int {
	cfg, err := configFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "base plugin: %v\n", err)
		return 1
	}
	if !stopWithParent() {
		return 1
	}
	sdk.Serve(New(cfg))
	running.killAll()
	return 0
}

// stopWithParent kills the running commands' process groups, which a
// signal to the plugin would not reach, when the plugin is told to stop or
// its parent (the host) dies. It returns false when the parent was already
// gone.
func stopWithParent() bool {
	ppid := os.Getppid()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		sig := <-sigs
		running.killAll()
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()
	if os.Getppid() != ppid {
		running.killAll()
		return false
	}
	return true
}

// init asks for SIGTERM rather than SIGKILL when the host dies, on the main
// thread, where the host's own request lives (see plugins/exec's init for
// the whole story): a SIGKILLed plugin could not kill its commands. Only
// the base plugin process does this; the agent CLI imports this package
// too.
func init() {
	if os.Getenv(ConfigEnv) == "" || os.Getenv(sdk.Handshake.MagicCookieKey) != sdk.Handshake.MagicCookieValue {
		return
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
}
