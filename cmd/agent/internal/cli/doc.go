// Package cli is the agent command line: cobra commands, viper
// configuration, output and exit codes, and the wiring of the registry to the
// plugin host.
//
// Start with root.go (Main, Run, NewCmdRoot) and factory.go (Factory: the IO
// streams, configuration and registry store every command gets). Each
// command lives in its own file with an xOptions struct, newCmdX(f, runF)
// and xRun(ctx, opts); tests pass runF to check flag parsing alone.
//
//   - add.go, update.go, remove.go, list.go, info.go, trust.go, validate.go:
//     `agent skill ...`; install.go is the Prepare step of add and update
//     (go build the plugin, hash it, describe its tools).
//   - workspace.go: what one process sees. It merges installed and bundled
//     skills, applies AGENT_SKILLS (registry.Select), indexes tools from the
//     registry cache without starting anything, and registers plugins with
//     the host, which starts them on the first call.
//   - tools.go, call.go: `agent tools` and `agent call`.
//   - plugin.go: the hidden `agent __plugin exec` that serves the built-in
//     script plugin from the same binary.
//   - errors.go, hints.go: every error a user sees passes through describe,
//     which adds what to do next.
//
// End-to-end tests run the real binary through testscript over
// testdata/script/*.txtar (script_test.go).
package cli
