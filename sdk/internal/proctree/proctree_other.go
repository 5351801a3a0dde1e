//go:build !linux

package proctree

// Subreaper: only Linux has subreapers; elsewhere process groups are all
// the containment there is.
func Subreaper() error { return nil }

func Children(int) []int { return nil }

func KillDescendants() {}

func KillAdopted(func(int) bool) {}
