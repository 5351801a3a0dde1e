// Package telemetry sets up OpenTelemetry tracing for one agent process from
// the standard OTEL_* environment (SPEC §17), and reads back the traces that
// the file exporter wrote.
//
// Tracing is off unless an OTEL_* variable asks for an exporter: contrib's
// autoexport alone would default to OTLP on localhost:4318, and the Go SDK
// ignores OTEL_SDK_DISABLED, so Start decides both itself. The propagator is
// set to W3C trace context in every case, so that a trace started by a caller
// (an MCP client, a parent agent) continues through this process.
//
// OTEL_TRACES_EXPORTER=file is this package's own exporter: one JSON line per span under $AGENT_HOME/traces/, which
// ReadTraces reads back for `agent trace`.
//
// It is a leaf: it imports nothing of the project. The attribute keys that
// other packages put on spans live in the semconv subpackage, which imports
// only otel/attribute, so that packages which make spans do not link the
// exporters.
//
// Floor: mechanisms (docs/architecture.md). It may import other mechanisms,
// the ground and sdk; it must not import internal/app, host, plugins/,
// registry or cmd/, which are the floors that use it.
package telemetry
