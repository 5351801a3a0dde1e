// Package probe is the one copy of the accesses that the sandbox tests
// try (SPEC §8): Try runs inside the sandboxed process (the host's test
// plugin, internal/isolation/sandbox's helper, and the reliability suite's skill
// plugin, which builds a verbatim copy of this folder against the SDK
// alone, so it imports nothing but the standard library); Python is the
// same probe as a script; Servers is the test's side, the loopback
// servers that count what reached them.
package probe
