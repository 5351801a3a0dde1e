// Package jaegertest runs a real trace backend for tests: Jaeger (an
// OpenTelemetry collector build), started by the test with a minimal
// configuration — an OTLP/HTTP receiver and the query API on free
// 127.0.0.1 ports, in-memory storage, nothing else — and read back through
// its HTTP query API (/api/traces).
//
// Jaeger is not built by go test: `make jaeger` builds it once into
// ~/.cache/agent-ci (.ci/run does so before make test). Start finds it
// through AGENT_JAEGER or at that cache path; where it is missing the test
// skips and says how to get it, except under CI=true, where it fails.
package jaegertest
