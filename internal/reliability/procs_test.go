//go:build reliability

package reliability

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// proc is one process as /proc shows it.
type proc struct {
	PID, PPID, PGID int
	State           byte // R, S, D, Z, T, ...
	Comm            string
	Exe             string // "" when unreadable or gone
	Cmdline         []string
}

func (p proc) String() string {
	return strconv.Itoa(p.PID) + " (" + p.Comm + ") state " + string(p.State) + " ppid " + strconv.Itoa(p.PPID) + " " + strings.Join(p.Cmdline, " ")
}

// procs lists every process on the machine.
func procs() []proc {
	ents, _ := os.ReadDir("/proc")
	var out []proc
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may contain spaces and ')'.
		open, close := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || close < open {
			continue
		}
		f := strings.Fields(string(stat[close+1:]))
		if len(f) < 3 {
			continue
		}
		p := proc{PID: pid, Comm: string(stat[open+1 : close]), State: f[0][0]}
		p.PPID, _ = strconv.Atoi(f[1])
		p.PGID, _ = strconv.Atoi(f[2])
		p.Exe, _ = os.Readlink(filepath.Join("/proc", d.Name(), "exe"))
		if cl, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); err == nil && len(cl) > 0 {
			p.Cmdline = strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		}
		out = append(out, p)
	}
	return out
}

// matching lists live processes (and zombies) that mention any of marks in
// their executable path or command line, or whose comm is one of comms
// (zombies keep only their comm).
func matching(marks []string, comms ...string) []proc {
	var out []proc
	self := os.Getpid()
	for _, p := range procs() {
		if p.PID == self {
			continue
		}
		hit := false
		text := p.Exe + "\x00" + strings.Join(p.Cmdline, "\x00")
		for _, m := range marks {
			if m != "" && strings.Contains(text, m) {
				hit = true
			}
		}
		if p.State == 'Z' {
			for _, c := range comms {
				if p.Comm == c {
					hit = true
				}
			}
		}
		if hit {
			out = append(out, p)
		}
	}
	return out
}

// zombies returns the zombie processes that are not in before.
func newZombies(before map[int]bool) []proc {
	var out []proc
	for _, p := range procs() {
		if p.State == 'Z' && !before[p.PID] {
			out = append(out, p)
		}
	}
	return out
}

func zombieSet() map[int]bool {
	m := map[int]bool{}
	for _, p := range procs() {
		if p.State == 'Z' {
			m[p.PID] = true
		}
	}
	return m
}

// waitGone polls until no process matches, for at most limit, and returns
// what is still there. Polling is the observation; the bound is only there
// so that a leak fails instead of hanging.
func waitGone(limit time.Duration, marks []string, comms ...string) []proc {
	deadline := time.Now().Add(limit)
	for {
		left := matching(marks, comms...)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitFor polls until at least n processes match, for at most limit.
func waitFor(t testing.TB, limit time.Duration, n int, marks ...string) []proc {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		got := matching(marks)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %d processes matching %q; found %v", limit, n, marks, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupMembers lists live processes in process group pgid.
func groupMembers(pgid int) []proc {
	var out []proc
	for _, p := range procs() {
		if p.PGID == pgid && p.State != 'Z' {
			out = append(out, p)
		}
	}
	return out
}

// fdCount is how many file descriptors this process has open.
func fdCount() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}
