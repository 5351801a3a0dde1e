// Package atomicfile replaces a file so that a reader sees its old content
// or its new, never a part: the data goes to a temporary file in the same
// folder, which is then renamed over the target. A crash leaves at most the
// temporary file, named "." + the target's name + ".tmp-" + a number, for
// its owner's recovery to remove.
//
// Nothing is flushed to disk unless asked (Sync, SyncDir): most users write
// caches and indexes that are rebuilt when lost, and an fsync costs them
// more than the write. Folder swaps are not files and stay with their
// callers. docs/design.md says why this is not a module.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package atomicfile
