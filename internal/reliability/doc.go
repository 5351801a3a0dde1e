// Package reliability holds the fault, concurrency and hostile-input
// suite behind `make reliability` (build tag reliability, tests named
// TestReliability*). It has no code of its own: the tests drive the real
// agent binary, the host package, real git repositories (internal/testutil/gittest),
// real `go build` of plugins and real python3 scripts, and inspect /proc.
//
// Start with main_test.go (TestMain builds the agent and the hostile
// plugin in testdata/crashy; helpers to run the agent and check
// AGENT_HOME), then one file per part of the suite: soak_test.go,
// orphan_test.go, concurrency_test.go, crash_test.go, tamper_test.go and
// hostile_test.go. Each test prints one "RESULT <name>: <counts>" line,
// which docs/reliability.md quotes.
package reliability
