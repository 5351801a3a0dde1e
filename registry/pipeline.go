package registry

// Pipeline is the install pipeline over the store core: add, update, sync,
// rollback, link and trust, each read as Fetch → Discover → Stage →
// Prepare → Commit (docs/architecture.md, "skill add" walk). Fetch goes
// through the source family (sources: git, OCI, mirrors, the signer
// policy), Discover and Stage through registry/gitsrc and the work folder
// under skills/.tmp, Prepare is the port the application fills
// (internal/app/install: build and describe, which needs host), and Commit
// swaps folders and writes registry.json under the core's lock.
//
// It embeds the core so that its steps read the store's folders and
// settings directly; the core itself knows nothing of it.
type Pipeline struct{ *Store }

// NewPipeline returns the install pipeline over s.
func NewPipeline(s *Store) *Pipeline { return &Pipeline{Store: s} }
