// Package layout holds no code. Its test keeps the import arrows of SPEC §2
// ("Layout and dependency direction") true: it lists every package of the
// repository's modules with `go list` and fails naming any import the
// table there does not allow, such as a front end importing host or
// internal/app/install importing internal/app/workspace.
//
// Floor: the ground (docs/architecture.md), as a package with no code: it
// imports nothing. Its tests hold the floors table (floors_test.go) and SPEC
// §2's finer rows (layout_test.go).
package layout
