// Package sdk is what a skill plugin author imports: typed tools, the JSON
// schema of their input, and Serve, which turns a Skill into a plugin
// process the agent host can run.
//
// # Where to start
//
// Write each tool as a Go function from an input struct to any JSON-able
// result, wrap it with NewTool, collect the tools with NewSkill and hand
// that to Serve in main:
//
//	package main
//
//	import (
//		"context"
//
//		"github.com/agentskills/agent/sdk"
//	)
//
//	type greetIn struct {
//		Name     string `json:"name" description:"who to greet"`
//		Language string `json:"language,omitempty" description:"ISO 639-1 code, default en"`
//	}
//
//	func greet(ctx context.Context, in greetIn) (string, error) {
//		return "Hello, " + in.Name + "!", nil
//	}
//
//	func main() {
//		sdk.Serve(sdk.NewSkill(sdk.NewTool("greet", "Greet someone.", greet)))
//	}
//
// Test it without the host with package sdk/sdktest: sdktest.Run serves the
// skill in the test process, sdktest.Build and sdktest.Start run the real
// binary.
//
// # Input schema
//
// NewTool derives a JSON Schema from the input struct, and the skill checks
// arguments against it before the handler runs:
//
//   - the property name is the `json` tag name (the Go field name without
//     one); `json:"-"` and unexported fields are left out; fields of
//     embedded structs are promoted, as encoding/json does;
//   - a `description:"..."` tag becomes the property's description;
//   - a field is required unless its json tag has omitempty or omitzero, or
//     it is a pointer; a pointer field also accepts null, though with
//     omitempty or omitzero its schema gives the plain type (a caller
//     leaves the field out to leave it unset, and clients port a single
//     type best);
//   - string, bool, integers (range-checked, unsigned ones >= 0), floats,
//     slices and arrays, maps with string keys, nested structs and
//     time.Time (a date-time string) map to the JSON types you would expect;
//     interfaces, json.RawMessage and types with their own UnmarshalJSON
//     accept any value;
//   - objects built from structs reject unknown fields
//     (additionalProperties: false); names are matched case-sensitively.
//
// A failed check is an *Error with code invalid_args whose message names
// the field ("greet: field \"names[1]\": expected string, got integer").
//
// # Errors
//
// A handler that returns an *Error (or wraps one) passes it to the caller
// unchanged, so pick a stable Code. Any other error becomes tool_failed.
// The host adds plugin_crashed, timeout and canceled. The SDK does not
// recover panics: a panicking plugin dies, the call that caused it gets
// plugin_crashed and the host starts a fresh process for the next call.
//
// # The plugin process
//
// Serve speaks hashicorp/go-plugin over gRPC (proto/skill/v1) on a unix
// socket. Log with Logger (hclog); lines reach the host's log at the
// host's level. Anything the plugin prints to stdout, even from init,
// goes to the host's log instead of breaking the handshake. The plugin
// exits by itself when the host dies, and returns memory to the kernel
// when it has been idle for a while (WithIdleTrim).
package sdk
