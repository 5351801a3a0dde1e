// Package run is the agent runtime of `agent run` (SPEC §16): a model loop
// over the workspace's tools with deterministic, resumable state on disk.
//
// One step is: reason (one model call) → act (the turn's tool calls, run
// concurrently) → record (a checkpoint). Tools are resolved and called
// through internal/app/workspace, the same index the CLI and MCP use; this
// package only adds what a loop needs: the state files, events, delegation
// of `context: fork` skills and the model clients.
package run
