// Package semconv holds the attribute keys and span names of the GenAI and
// MCP semantic conventions (now in the semantic-conventions-genai
// repository), which go.opentelemetry.io/otel/semconv does not have yet.
// It imports only otel/attribute, so that any package may use it.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package semconv
