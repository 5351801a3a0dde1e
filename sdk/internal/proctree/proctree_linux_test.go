//go:build linux && !portable

package proctree

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gone polls until pid no longer exists at all (reaped), at most limit.
func gone(pid int, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			return true
		}
	}
	return false
}

// TestKillAdoptedEndsSetsidOrphans: as a subreaper this process adopts a
// daemon whose parent (sh) exited; KillAdopted kills and reaps it and
// leaves a kept child alone. (This test binary has no other children.)
func TestKillAdoptedEndsSetsidOrphans(t *testing.T) {
	if err := Subreaper(); err != nil {
		t.Skipf("no subreaper here: %v", err)
	}
	kept := exec.Command("sleep", "600")
	if err := kept.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kept.Process.Kill(); _ = kept.Wait() })
	out, err := exec.Command("/bin/sh", "-c", "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	daemon, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	KillAdopted(func(pid int) bool { return pid == kept.Process.Pid })
	if !gone(daemon, 5*time.Second) {
		t.Errorf("adopted daemon %d still exists (alive or unreaped)", daemon)
	}
	if zombie(kept.Process.Pid) {
		t.Errorf("kept child %d was killed", kept.Process.Pid)
	}
}

// TestKillDescendants ends a tree: a child, its child, and a setsid
// grandchild whose parent exited.
func TestKillDescendants(t *testing.T) {
	if err := Subreaper(); err != nil {
		t.Skipf("no subreaper here: %v", err)
	}
	cmd := exec.Command("/bin/sh", "-c", "sleep 600 & (setsid sleep 600 </dev/null >/dev/null 2>&1 &); echo $!; wait")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 32)
	n, _ := stdout.Read(b)
	grandchild, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	time.Sleep(200 * time.Millisecond) // let the setsid sleep start
	all := descendants(os.Getpid(), nil)
	KillDescendants()
	_ = cmd.Wait()
	KillAdopted(func(int) bool { return false }) // reap what was reparented
	for _, pid := range append(all, grandchild) {
		if !gone(pid, 5*time.Second) {
			t.Errorf("descendant %d survived", pid)
		}
	}
}
