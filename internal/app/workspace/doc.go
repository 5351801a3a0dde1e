// Package workspace is what one agent process sees of its skills and how a
// tool call is routed: which skills AGENT_SKILLS activates (SPEC §7), the
// tool index with its collision rules, the built-in tools (use_skill and the
// script tools), Layer 1 and Layer 2 of progressive disclosure (SPEC §10)
// and calls through the plugin host. Every front end (the CLI, `agent mcp`,
// `agent run`) is built on it, so none of them holds logic another would
// need.
//
// Start with Load, which builds a Workspace from a Config without starting
// any process. Workspace.Call is the only call path: it resolves a name,
// applies the deadline policy, approval and allowed-tools, invokes the tool
// (starting plugins lazily), runs a fork skill's delegation and maps every
// failure to a code, returning an Outcome. Workspace.Layer1 is the only
// Layer 1. LoadView reports every known skill and why it is or is not
// active, which is what `agent check` is built from.
//
// This package translates between registry (what is installed) and host
// (what runs), which never import each other. It has no cobra, no viper and
// no user wording about exit codes: errors are sentinels wrapped with the
// operation, and tool failures are sdk.Error codes.
//
// Floor: the application (docs/architecture.md). It may import host,
// plugins/, registry, the mechanisms and the ground; only cmd/ and other
// rooms of internal/app import it, and it must not import cmd/.
package workspace
