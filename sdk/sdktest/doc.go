// Package sdktest runs a skill from a test without the agent host.
//
// Start with Run, which serves an sdk.Skill in the test process through the
// same gRPC adapters the host uses. To test the real binary, Build compiles
// the plugin's main package and Start runs it as a go-plugin subprocess:
//
//	func TestGreet(t *testing.T) {
//		c := sdktest.Start(t, sdktest.Build(t, "."), "HELLO_GREETING=Hi")
//		res, err := c.Call(context.Background(), "greet", map[string]any{"name": "Ada"})
//		...
//	}
package sdktest
