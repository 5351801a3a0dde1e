// Package layout holds no code. Its test keeps the import arrows of SPEC §2
// ("Layout and dependency direction") true: it lists every package of the
// repository's modules with `go list` and fails naming any import the
// table there does not allow, such as a front end importing host or
// internal/app/install importing internal/app/workspace.
package layout
