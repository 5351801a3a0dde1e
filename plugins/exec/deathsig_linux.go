package exec

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/sdk"
)

// init asks for SIGTERM, not SIGKILL, when the host dies. The kernel keeps
// a death-signal request per thread and sends every thread's request: the
// host asked for SIGKILL on the thread it started, our main thread, and a
// SIGKILLed plugin cannot kill its scripts' process groups, whose
// descendants would then outlive the host. stopWithParent's own request
// runs on whatever thread its goroutine happens to use; package
// initialisation is the one time Go code is sure to run on the main
// thread. Only the exec plugin process (config and handshake cookie in its
// environment) does this: the agent CLI imports this package too.
func init() {
	if os.Getenv(ConfigEnv) == "" || os.Getenv(sdk.Handshake.MagicCookieKey) != sdk.Handshake.MagicCookieValue {
		return
	}
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
}
