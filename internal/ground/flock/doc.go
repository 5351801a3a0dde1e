// Package flock takes advisory whole-file locks that serialise writers
// across processes: flock(2) on Unix, LockFileEx on Windows. A lock
// belongs to the open file: each Lock needs its own *os.File. It is a
// leaf: it imports nothing of the project.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package flock
