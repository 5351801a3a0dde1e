//go:build !linux

package gitsrc

import (
	"io/fs"
	"time"
)

// changeTime is not read here (each platform spells it differently), so
// Uncommitted reads every tracked file.
func changeTime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
