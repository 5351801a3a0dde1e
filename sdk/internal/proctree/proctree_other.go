//go:build !linux || portable

package proctree

// Subreaper: only Linux has subreapers; elsewhere (and with the portable
// tag) the host's containment (procgroup: a process group, or a Windows
// Job Object) is all there is, and a descendant that leaves the process
// group (setsid) is not found.
func Subreaper() error { return nil }

// ParentDeathSignal: no parent-death signal here; Serve's parent poll
// notices the host's death instead.
func ParentDeathSignal() {}

func Children(int) []int { return nil }

func KillDescendants() {}

func KillAdopted(func(int) bool) {}
