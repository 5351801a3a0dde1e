package sdktest_test

import (
	"context"
	"testing"

	"github.com/agentskills/agent/sdk"
	"github.com/agentskills/agent/sdk/sdktest"
)

// Run serves the skill over gRPC inside the test process, so a tool goes
// through the same adapters the host uses. (In a real test t is the test's
// *testing.T; this example only compiles.)
func ExampleRun() {
	var t *testing.T
	skill := sdk.NewSkill(sdk.NewTool("echo", "Echo the text.", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	}))
	c := sdktest.Run(t, skill)
	res, err := c.Call(context.Background(), "echo", map[string]string{"text": "hi"})
	if err != nil || string(res.Value) != `"hi"` {
		t.Fatalf("echo = %s, %v", res.Value, err)
	}
}

// Build compiles the plugin's main package with `go build` and Start runs
// the binary as the host would: a real subprocess behind the handshake.
func ExampleStart() {
	var t *testing.T
	bin := sdktest.Build(t, "./plugin")
	c := sdktest.Start(t, bin, "GREETING=Hallo")
	tools, err := c.Describe(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("describe: %v, %d tools", err, len(tools))
	}
}
