package base

// Windows has no /bin/sh, so shell_command refuses and says to use exec;
// a path may use either slash; a program is a file ending in .exe or
// .com (no file has an execute bit there, and .bat/.cmd would run
// through cmd.exe, which parses the arguments again).
const (
	shellPath      = ""
	pathSeparators = `/\:`
)

var programExts = []string{".exe", ".com"}
