//go:build linux && !portable

package proctree

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Subreaper makes this process the reaper of its orphaned descendants.
func Subreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// ParentDeathSignal has the kernel send this process SIGTERM when its
// parent dies, even by SIGKILL. The request belongs to the calling thread's
// parent: call it from the main thread, during package initialisation.
func ParentDeathSignal() {
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
}

// KillGroup: on Linux KillDescendants has ended everything already.
func KillGroup() {}

// IsSubreaper reports whether this process adopts its orphans.
func IsSubreaper() bool {
	var on int32
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&on)), 0, 0, 0)
	return err == nil && on != 0
}

// Children returns the children of pid, over all its threads.
func Children(pid int) []int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// descendants appends every descendant of pid to out.
func descendants(pid int, out []int) []int {
	for _, c := range Children(pid) {
		out = append(out, c)
		out = descendants(c, out)
	}
	return out
}

// KillDescendants SIGKILLs every descendant of this process, over and over
// until a walk finds none alive: a process caught mid-fork can add a child
// after the walk passed it, and the dead's children are reparented to us
// (a subreaper). It reaps nothing; the caller is about to exit, or reaps
// its own children.
func KillDescendants() {
	self := os.Getpid()
	for round := range 50 {
		live := 0
		for _, pid := range descendants(self, nil) {
			if !zombie(pid) {
				live++
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if live == 0 {
			return
		}
		time.Sleep(time.Duration(round+1) * time.Millisecond)
	}
}

// KillAdopted ends the children of this process for which keep returns
// false, with all their descendants, and reaps them. As a subreaper we
// adopt orphans: a script's setsid daemon whose parent exited. keep must
// return true for every child that os/exec (or anyone) still waits for:
// this waits for the others by pid, never for any child.
//
// It does nothing unless this process is a subreaper: otherwise nothing
// is adopted, and every child is someone's to wait for.
func KillAdopted(keep func(pid int) bool) {
	if !IsSubreaper() {
		return
	}
	self := os.Getpid()
	for round := range 50 {
		found := false
		for _, c := range Children(self) {
			if keep(c) {
				continue
			}
			found = true
			for _, d := range descendants(c, nil) {
				_ = syscall.Kill(d, syscall.SIGKILL)
			}
			_ = syscall.Kill(c, syscall.SIGKILL)
			var info unix.Siginfo
			for unix.Waitid(unix.P_PID, c, &info, unix.WEXITED, nil) == unix.EINTR {
			}
		}
		if !found {
			return
		}
		time.Sleep(time.Duration(round+1) * time.Millisecond)
	}
}

// zombie reports a process that is dead but not reaped (or gone).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}
