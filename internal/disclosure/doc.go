// Package disclosure implements progressive disclosure (SPEC §10): what a
// model sees of the active skills before it uses one (Layer 1), the SKILL.md
// body it gets when it does (Layer 2), and a token counter for both.
//
// Start with Layer1, which lays out skill names and descriptions plus the
// generic tool descriptions within a character budget; Substitute fills
// $ARGUMENTS placeholders in a body; Check applies the trigger matrix of
// user-invocable and disable-model-invocation; CL100K counts tokens with a
// real cl100k_base BPE that loads in milliseconds.
//
// Nothing here reads files: callers hand in manifests they parsed from
// SKILL.md, so by construction no script or reference reaches a model's
// context through this package. There is no cobra here; the commands that
// use it live in internal/app/workspace and cmd/agent/internal/cli.
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package disclosure
