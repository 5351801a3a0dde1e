//go:build windows

package registry

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// statOf has no inode number and no change time on Windows: see fileStat.
func statOf(fi fs.FileInfo) (fileStat, bool) {
	d, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	if !ok {
		return fileStat{}, false
	}
	m := d.LastWriteTime.Nanoseconds()
	return fileStat{size: fi.Size(), mtime: m, ctime: m, regular: fi.Mode().IsRegular()}, true
}

func statPath(p string) (fileStat, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileStat{}, err
	}
	st, _ := statOf(fi)
	return st, nil
}

func lstatPath(p string) (fileStat, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileStat{}, err
	}
	st, _ := statOf(fi)
	return st, nil
}

// inode is the folder's file index (what NTFS has for an inode number),
// read through a handle opened without following a reparse point.
func inode(p string) (uint64, bool) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return 0, false
	}
	h, err := windows.CreateFile(name, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0, false
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return 0, false
	}
	return uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow), true
}

// Listings stats each full path on Windows.
func openDir(string) int                   { return -1 }
func lstatAt(int, string) (fileStat, bool) { return fileStat{}, false }
func closeDir(int) error                   { return nil }
