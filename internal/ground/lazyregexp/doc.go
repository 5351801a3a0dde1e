// Package lazyregexp is a regexp.Regexp compiled on first use. Package-level
// regexps compiled at init cost every process, `agent version` included,
// even when the command never matches anything (SPEC §11: the project's
// inits take under 1 ms in all). cmd/go keeps the same wrapper
// (internal/ground/lazyregexp) for the same reason. A leaf: it imports only the
// standard library.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package lazyregexp
