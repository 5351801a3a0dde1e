// Package sdkmod carries the plugin SDK inside the agent binary: the
// modules github.com/agentskills/agent/sdk and .../proto as Go module zips,
// at the version of this build. WriteProxy lays them out as a GOPROXY
// directory, so a plugin whose go.mod requires the SDK builds on a machine
// that has only agent, Go and the public module proxy.
//
// The zips are generated from sdk/ and proto/ by `make generate` (go
// generate ./internal/build/sdkmod); TestEmbeddedIsCurrent fails when they are
// stale.
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package sdkmod
