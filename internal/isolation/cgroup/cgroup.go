package cgroup

import "errors"

// ErrUnavailable is wrapped by Detect's error when this process has no
// writable cgroup v2 hierarchy below its own cgroup.
var ErrUnavailable = errors.New("no writable cgroup v2 hierarchy")

// Mode says which containment this process's plugins and scripts get,
// for `agent check`: "cgroup v2" and the folder below which their groups
// are made, or the fallback and why. It creates nothing.
func Mode() (mode, detail string) {
	dir, err := Detect()
	if err != nil {
		return "process groups and a subreaper", err.Error()
	}
	return "cgroup v2", dir
}
