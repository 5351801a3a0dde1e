// Package exec is the built-in skill that runs skills' PEP 723 Python
// scripts: the tools script_list, script_help and script_run (SPEC §9).
//
// It ships inside the agent binary. The host starts it like any other
// plugin by re-executing `agent __plugin exec`, whose whole body is Main:
// Main reads a Config (the active skills, timeout, output cap, uv path, help
// cache folder) as JSON from the AGENT_EXEC_CONFIG variable and serves
// New(cfg) with sdk.Serve. The CLI also calls Discover and ParseMetadata
// directly so that `agent skill info` can show a skill's scripts and their
// `# /// script` metadata without starting a process.
//
// Where to start reading:
//
//   - discover.go: which files are scripts (scripts/*.py or the manifest's
//     list, minus scripts_ignore; symbolic links and escapes rejected) and
//     how a caller's name (Status, status, status.py) finds one.
//   - metadata.go: the PEP 723 block, found with the PEP's reference regular
//     expression, and the small TOML subset it needs.
//   - runner.go: how a script runs: `<environment's python> <abs path>
//     args... [--json]` after `uv sync --script` (uv.go), or `python3 <abs
//     path> ...` when uv is missing and the
//     script declares no dependencies), no shell, in the script's folder,
//     in its own process group with a minimal environment; the timeout,
//     output caps and the killing of the whole group.
//   - service.go: the three tools, their inputs and results, the error
//     codes and the help cache.
//   - main.go: the plugin process (internal/isolation/procgroup), which kills its running
//     scripts when told to stop or when the host dies.
//
// Every tool failure is an *sdk.Error with one of the Code* constants
// (not_found, invalid_name, args_too_large, timeout, parse_error,
// execution_failed, permission_denied, uv_not_found; invalid_args for a NUL
// byte in an argument or environment value).
package exec
