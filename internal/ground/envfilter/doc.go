// Package envfilter decides which of the host's environment variables a
// skill's code (a plugin, a script, a `base` command) may see: the
// permissions.env patterns of SKILL.md, and the secrets that stay home
// unless a skill or the configuration names them (SPEC §12).
//
// It is a leaf: host, plugins/exec, plugins/base and the workspace import
// it, and it imports nothing of the project.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package envfilter
