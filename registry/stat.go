package registry

// fileStat is what the registry's fingerprints and stamps read from one
// stat: enough to tell that a file changed without opening it. Where a
// system has no change time (Windows), ctime is the modification time;
// where it has no inode number without opening the file, ino is 0 and
// the other fields carry the fingerprint.
type fileStat struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // ns since the epoch
	regular      bool
}
