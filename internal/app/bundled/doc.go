// Package bundled holds the skills that ship inside the agent binary. They
// are always trusted, and no installed, linked or discovered skill takes
// one of their names (SPEC §5).
//
// A bundled skill whose SKILL.md has `metadata: {activation: named}` is
// active only when AGENT_SKILLS names it (registry.Entry.NamedOnly).
//
// Each bundled skill is a folder under skills/ with a SKILL.md, embedded
// with go:embed. Start with Entries (what `agent check` and AGENT_SKILLS
// see) and Manifest (the parsed SKILL.md, body included).
//
// Floor: the application (docs/architecture.md). It imports registry (and
// the ground) only; it must not import host, plugins/ or cmd/.
package bundled
