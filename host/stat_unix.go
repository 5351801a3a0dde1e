//go:build unix

package host

import (
	"os"
	"syscall"
)

// sysStat returns the file's identity and times (Size is the caller's).
func sysStat(fi os.FileInfo) (fingerprint, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fingerprint{}, false
	}
	return fingerprint{
		Dev:     uint64(st.Dev),
		Ino:     uint64(st.Ino),
		MtimeNs: mtimeNs(st),
		CtimeNs: ctimeNs(st),
	}, true
}
