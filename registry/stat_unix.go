//go:build unix

package registry

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

func fromUnix(st *unix.Stat_t) fileStat {
	return fileStat{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
		regular: st.Mode&unix.S_IFMT == unix.S_IFREG,
	}
}

func statPath(p string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return fileStat{}, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	return fromUnix(&st), nil
}

func lstatPath(p string) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fileStat{}, &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	return fromUnix(&st), nil
}

// statOf reads what os.Lstat already holds.
func statOf(fi fs.FileInfo) (fileStat, bool) {
	st, ok := fi.Sys().(*unix.Stat_t)
	if !ok {
		return fileStat{}, false
	}
	return fromUnix(st), true
}

// inode is the folder's inode number: a swap of folders is told by it.
func inode(p string) (uint64, bool) {
	st, err := lstatPath(p)
	return st.ino, err == nil
}

// openDir and lstatAt let Listings stat many SKILL.md files relative to
// one open skills folder, without resolving the full path each time.
func openDir(dir string) int {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	return fd
}

func lstatAt(fd int, rel string) (fileStat, bool) {
	var st unix.Stat_t
	if unix.Fstatat(fd, rel, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return fileStat{}, false
	}
	return fromUnix(&st), true
}

func closeDir(fd int) error { return unix.Close(fd) }
