// Package registry is the store of installed skills: the store core
// (Store: $AGENT_HOME/skills/registry.json plus the skill folders, kept
// consistent across processes by Edit, the one transaction, in store.go),
// with rooms of its own for the binary index (index.go), the recovery of a
// killed writer's leftovers (recover.go) and the per-file integrity records
// (integrity.go); and over the core, the install pipeline (Pipeline,
// pipeline.go: add, update, sync, rollback, link and trust, each Fetch →
// Discover → Stage → Prepare → Commit). Parsing SKILL.md lives in
// registry/manifest; sources, one-commit fetches, the tree FS and
// discovery live in registry/gitsrc and registry/ocisrc; publish, sign and
// mirror in registry/provenance; the accepted signers and trusted folders
// in registry/trust. Select (select.go) decides which installed skills are
// active for an AGENT_SKILLS value. docs/architecture.md draws the rooms.
//
// Start with Store: NewStore(home), then List, Get and Remove;
// NewPipeline(store) adds, updates and syncs. The pipeline stages all work
// under skills/.tmp/ and commits under a flock on skills/.lock by swapping
// directories and writing registry.json last; a writer that finds
// leftovers of a killed run rolls them back or forward (recover.go);
// readers (List, Get) do the same first when a dead run left anything, so
// they never see a half-done update. LoadInstalled (installed.go) loads an
// installed skill's SKILL.md and refuses one that changed after install
// (ErrModified), using the sha256 recorded in the entry.
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
// callback (internal/app/install). Floor 3: it must not import host,
// plugins or internal/app, nor its rooms above the core
// (registry/provenance, registry/trust).
package registry
