//go:build !windows

package base

// shellPath runs shell_command; exec names a program with a path when it
// holds a slash; programExts nil: a program is a file with an execute bit.
const (
	shellPath      = "/bin/sh"
	pathSeparators = "/"
)

var programExts []string
