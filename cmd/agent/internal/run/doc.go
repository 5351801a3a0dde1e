// Package run is the agent runtime of `agent run` (SPEC §16): a model loop
// over the workspace's tools with deterministic, resumable state on disk.
//
// One step is: reason (one model call) → act (the turn's tool calls, run
// concurrently) → record (a checkpoint). Tools are resolved and called
// through internal/app/workspace, the same index the CLI and MCP use; this
// package only adds what a loop needs: the state files, events, delegation
// of `context: fork` skills and the model clients.
//
// Floor: front ends (docs/architecture.md), beside the CLI under cmd/agent,
// and only cmd imports it. It reaches skills through internal/app/workspace
// and must not import host, registry or plugins/ itself.
package run
