// Package plugbuild builds a skill's Go plugin with `go build`, supplying
// the SDK that this agent embeds (internal/build/sdkmod) at this agent's version,
// without writing a byte into the skill folder.
//
// How: the embedded modules are laid out as a GOPROXY directory under
// $AGENT_HOME/cache/goproxy and put in front of the user's GOPROXY. The
// plugin's go.mod and go.sum are copied to a temp folder, the copy gets a
// replace that pins the SDK to the embedded version, and go builds with
// -modfile pointing at it. go writes go.mod and go.sum changes next to the
// -modfile, so the skill's own files, and therefore its h1: hash, stay as
// they were.
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package plugbuild
