// Package registry is the store of installed skills: it keeps
// $AGENT_HOME/skills/registry.json plus the skill folders consistent across
// processes (store.go, add.go, update.go), with a binary index of the
// registry kept internal (index.go). Parsing SKILL.md lives in
// registry/manifest; sources, one-commit fetches, the tree FS and
// discovery live in registry/gitsrc. Select (select.go) decides which
// installed skills are active for an AGENT_SKILLS value.
//
// Start with Store: NewStore(home), then Add, Update, Remove, List and Get.
// Add and Update stage all work under skills/.tmp/ and commit under a flock on
// skills/.lock by swapping directories and writing registry.json last; a
// writer that finds leftovers of a killed run rolls them back or forward
// (recover.go); readers (List, Get) do the same first when a dead run left
// anything, so they never see a half-done update. LoadInstalled
// (installed.go) loads an installed skill's SKILL.md and refuses one that
// changed after install (ErrModified), using the sha256 recorded in the
// entry.
//
// Untrusted skills are files only: Add and Update run Prepare (build and
// describe) only for trusted skills, and Trust (trust.go) runs it later
// from the pinned commit. Integrity (integrity.go) records the h1: dirhash
// of every installed folder in the entry (DirHash) and per-file sums under
// $AGENT_HOME/state/integrity/; CheckIntegrity is the cheap first-use check
// (a fingerprint per file) and Verify names what changed. CheckNoLinks is
// the one symbolic-link rule, applied before anything is built.
//
// The package never runs the git binary and never imports host: building a
// plugin and describing its tools is the caller's job, done in a Prepare
// callback.
package registry
