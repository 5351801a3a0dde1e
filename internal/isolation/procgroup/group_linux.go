//go:build linux && !portable

package procgroup

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/isolation/cgroup"
)

// sysGroup on Linux: a process group of its own, and the kernel kills the
// leader if the thread that started it dies (even by SIGKILL). Where a
// cgroup v2 hierarchy is writable (internal/cgroup), the command also
// starts in a cgroup of its own (clone3 into it), which keeps every
// descendant, setsid or env -i or not, and cgroup.kill ends them all.
// Elsewhere descendants that leave the process group are the subreaper's:
// the sdk makes every plugin one, and the host one for its plugins.
type sysGroup struct {
	cg     *cgroup.Group
	pid    int
	killed []int // the cgroup's members when it was killed
}

// session says where commands' cgroups are made: the host's session
// (UseSession), killed by a watcher when the host dies, or this process's
// own cgroup (a plugin, which the host put in one that it kills).
var session atomic.Bool

// UseSession makes the groups of this process (a host) live in its cgroup
// session (cgroup.Shared).
func UseSession() { session.Store(true) }

func (g *sysGroup) prepare(cmd *exec.Cmd) error {
	attr := sysProcAttr(cmd)
	attr.Setpgid = true
	attr.Pdeathsig = syscall.SIGKILL
	parent, err := cgroup.Local()
	if session.Load() {
		parent, err = cgroup.Shared()
	}
	if err == nil {
		if cg, err := parent.New("group"); err == nil {
			g.cg = cg
			cg.Attach(attr)
		}
	}
	return nil
}

func (g *sysGroup) started(cmd *exec.Cmd) error {
	g.pid = cmd.Process.Pid
	return nil
}

func (g *sysGroup) kill(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	if g.cg != nil {
		g.killed = append(g.killed, g.cg.Members()...)
		_ = g.cg.Kill()
	}
}

func (g *sysGroup) stop(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }

// release removes the cgroup, and reaps its killed members that this
// process adopted as a subreaper (their parent died first): the cgroup,
// not a marker they could remove, says they were the command's. Only the
// command's own descendants are ever in its cgroup, and the leader is
// left to os/exec.
func (g *sysGroup) release() {
	if g.cg == nil {
		return
	}
	g.killed = append(g.killed, g.cg.Members()...)
	_ = g.cg.Close(2 * time.Second)
	self := os.Getpid()
	for _, pid := range g.killed {
		if pid == g.pid || parentOf(pid) != self {
			continue
		}
		var info unix.Siginfo
		for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED, nil) == unix.EINTR {
		}
	}
	g.killed, g.cg = nil, nil
}

// parentOf reads pid's parent from /proc, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// waitExit returns once pid has exited, without reaping it: until os/exec
// reaps it, its pid and process group id cannot be reused.
func (*sysGroup) waitExit(pid int) bool {
	var info unix.Siginfo
	for unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
	}
	return true
}

// onParentExit has the kernel send SIGTERM to this process when its parent
// dies (even by SIGKILL); sigs receives it once Notify'd.
func onParentExit(int, chan<- os.Signal) {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
}

// Protections names what holds a started command's processes together
// here, for agent check.
func Protections() []string {
	if mode, detail := cgroup.Mode(); mode == "cgroup v2" {
		return []string{"cgroup v2 below " + detail + " (cgroup.kill)", "process group", "parent-death signal"}
	} else {
		return []string{"process group", "parent-death signal", "subreaper (setsid descendants); no cgroup v2: " + detail}
	}
}
