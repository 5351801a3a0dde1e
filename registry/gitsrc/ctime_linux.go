//go:build linux

package gitsrc

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTime is fi's ctime, which git's index records as well: content
// written and the mtime set back still changes it.
func changeTime(fi fs.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true // int32 fields on 32-bit platforms
}
