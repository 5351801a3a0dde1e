package host

import (
	"os/exec"
	"time"

	"github.com/agentskills/agent/internal/cgroup"
)

// groupClose bounds the wait for a killed plugin's cgroup to empty.
const groupClose = 2 * time.Second

// contain puts the plugin that template starts into a cgroup of its own
// below this process's session (SPEC §8 "cgroup v2 first"), where one is
// writable: whatever it starts stays inside, setsid and env -i included,
// and cgroup.kill ends all of it. It returns the command to start, which
// is template itself where there is no cgroup (process groups and the
// subreaper are the fallback).
func (r *procRunner) contain(template *exec.Cmd) *exec.Cmd {
	session, err := cgroup.Shared()
	if err != nil {
		return template
	}
	g, err := session.New("plugin")
	if err != nil {
		r.logger.Debug("no cgroup for the plugin; process group only", "error", err)
		return template
	}
	r.group = g
	attr := *template.SysProcAttr
	g.Attach(&attr)
	cmd := *template
	cmd.SysProcAttr = &attr
	return &cmd
}

// killContained SIGKILLs everything in the plugin's cgroup, and notes who
// was there: those whose parent died before them were adopted by this
// process (a subreaper) and are reaped by releaseContained.
func (r *procRunner) killContained() {
	if r.group == nil {
		return
	}
	r.killed = append(r.killed, r.group.Members()...)
	_ = r.group.Kill()
}

// releaseContained kills the plugin's cgroup, removes it, and reaps the
// killed processes this process adopted. The cgroup, not a marker the
// process could remove, says which adopted children were the plugin's.
func (r *procRunner) releaseContained() {
	if r.group == nil {
		return
	}
	r.killContained()
	if err := r.group.Close(groupClose); err != nil {
		r.logger.Warn("plugin cgroup", "error", err)
	}
	reapAdopted(r.killed, r.pid)
	r.killed = nil
}
