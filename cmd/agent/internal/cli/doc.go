// Package cli is the agent command line: cobra commands, viper
// configuration, output and exit codes, and the wiring of the registry to the
// plugin host.
//
// Start with root.go (Main, Run, NewCmdRoot) and factory.go (Factory: the IO
// streams, configuration, the registry store, the workspace and the
// installer every command gets). Each command lives in its own file with an
// xOptions struct, newCmdX(f, runF) and xRun(ctx, opts); tests pass runF to
// check flag parsing alone.
//
//   - add.go, update.go, sync.go, rollback.go, remove.go, link.go, list.go,
//     info.go, show.go, trust.go, validate.go, verify.go, lock.go, publish.go,
//     sign.go, mirror.go, init.go: `agent skill ...` (skill_cmds.go groups
//     them); the Prepare step of add and update is internal/app/install.
//   - agents.go, placements.go: placements in other agents (internal/app/placement).
//   - tools.go, call.go, prompt.go, disclosure_cmds.go: `agent tools`, `agent
//     call` and the Layer 1/2 commands, all through internal/app/workspace.
//   - mcp.go, run.go: `agent mcp` and `agent run`, whose front ends live
//     beside this package (cmd/agent/internal/mcp, cmd/agent/internal/run).
//   - plugin.go: the hidden `agent __plugin exec` that serves the built-in
//     script plugin from the same binary.
//   - check.go, trace.go, tracing.go, version.go: `agent check`, `agent trace`,
//     the process's tracing and `agent version`.
//   - errors.go, output.go: every error a user sees passes through describe,
//     which adds what to do next; tables and confirmations.
//
// The floors and who may import whom: docs/architecture.md.
//
// End-to-end tests run the real binary through testscript over
// testdata/script/*.txtar (script_test.go).
package cli
