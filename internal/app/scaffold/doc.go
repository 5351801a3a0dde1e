// Package scaffold writes a new skill folder that validates, builds,
// installs and answers a call as it is: `agent skill init`.
//
// Floor: the application (docs/architecture.md). It may import host,
// plugins/, registry, the mechanisms and the ground; only cmd/ and other
// rooms of internal/app import it, and it must not import cmd/.
package scaffold
