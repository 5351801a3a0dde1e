// Package install prepares a skill for the registry: it builds the plugin
// (internal/build/plugbuild against the embedded SDK), hashes it, describes
// its tools through the host and cleans the state a removed skill leaves
// (preparer.go, state.go). Preparer is the port that registry calls during
// add, update and link; relinking a dev skill is injected into the workspace
// by cmd (link.go).
//
// Floor: the application (docs/architecture.md). It may import host,
// plugins/, registry, the mechanisms and the ground; only cmd/ and other
// rooms of internal/app import it, and it must not import cmd/. It must not
// import internal/app/workspace: cmd injects relinking into the workspace.
package install
