package sdk

import (
	"bufio"
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// trimMemory gives memory back to the kernel while the plugin is idle:
// free heap pages, and the pages of our own executable that start-up
// touched (gRPC and protobuf initialisation reads megabytes of tables the
// serving path never needs again). Those are clean file pages still in the
// page cache, so touching them later is a minor fault, not disk I/O.
func trimMemory() {
	debug.FreeOSMemory()
	var exe syscall.Stat_t
	if err := syscall.Stat("/proc/self/exe", &exe); err != nil {
		return
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range parseSmaps(b, exe.Ino) {
		// Only read-only private mappings of the executable without any
		// anonymous (copy-on-write) page: dropping those pages loses
		// nothing, they come back from the file unchanged.
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_DONTNEED)
	}
}

type mapping struct{ start, end uint64 }

// parseSmaps returns the droppable mappings of inode ino in a
// /proc/self/smaps dump.
func parseSmaps(b []byte, ino uint64) []mapping {
	var out []mapping
	var cur *mapping
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			cur = nil
			perms := f[1]
			if perms[1] == 'w' || perms[3] != 'p' || perms[0] != 'r' {
				continue
			}
			if n, err := strconv.ParseUint(f[4], 10, 64); err != nil || n != ino || n == 0 {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			s, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil || e <= s {
				continue
			}
			out = append(out, mapping{s, e})
			cur = &out[len(out)-1]
			continue
		}
		if cur != nil && len(f) >= 2 && f[0] == "Anonymous:" && f[1] != "0" {
			out = out[:len(out)-1]
			cur = nil
		}
	}
	return out
}
