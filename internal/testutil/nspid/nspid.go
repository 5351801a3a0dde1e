// Package nspid finds, for tests, the pid in this process's PID
// namespace of a process that reported its own pid from inside a
// sandbox's PID namespace (internal/isolation/sandbox runs every sandboxed child
// so: os.Getpid there is small, and says nothing out here).
package nspid

import (
	"os"
	"strconv"
	"strings"
)

// Host returns the pid, in this namespace, of the descendant of root
// (a pid of this namespace) that sees itself as inner: the last field
// of its NSpid, or its pid when it is in this namespace. 0 when none
// is running. Anchor root at the process that started the sandboxed
// one, not the test: parallel tests' namespaces number alike. With argv,
// the process's command line must be exactly that too.
func Host(root, inner int, argv ...string) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	parent := map[int]int{}
	var matches []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			f := strings.Fields(v)
			switch {
			case k == "PPid" && len(f) == 1:
				parent[pid], _ = strconv.Atoi(f[0])
			case k == "NSpid" && len(f) > 0 && f[len(f)-1] == strconv.Itoa(inner):
				matches = append(matches, pid)
			}
		}
	}
	for _, pid := range matches {
		if len(argv) > 0 {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			if string(b) != strings.Join(argv, "\x00")+"\x00" {
				continue
			}
		}
		for p, n := pid, 0; p > 1 && n < 64; p, n = parent[p], n+1 {
			if p == root {
				return pid
			}
		}
	}
	return 0
}
