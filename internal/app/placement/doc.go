// Package placement keeps copies of installed skills in other agents' skill
// folders (SPEC §19): which agents it knows (agents.json), making, replacing
// and removing the copies recorded in the registry, and checking them
// (manager.go, files.go).
//
// Floor: the application (docs/architecture.md). It imports registry (and
// the ground) only; it must not import host, plugins/ or cmd/.
package placement
