package sdk_test

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/agentskills/agent/sdk"
)

type countIn struct {
	Text string `json:"text"`
}

// A tool marks the slow part of its work with a span of its own. It is a
// child of the host's execute_tool span when the host traces the call
// (OTEL_TRACES_EXPORTER and friends), and costs next to nothing when it
// does not. End it before the tool returns: it travels with the reply.
func ExampleStartSpan() {
	count := sdk.NewTool("count_words", "Count the words of a text.", func(ctx context.Context, in countIn) (int, error) {
		_, span := sdk.StartSpan(ctx, "split words", attribute.Int("text.length", len(in.Text)))
		defer span.End()
		return len(strings.Fields(in.Text)), nil
	})
	res, err := sdk.NewSkill(count).Invoke(context.Background(), "count_words", []byte(`{"text":"one two three"}`))
	fmt.Println(string(res.Value), err)
	// Output: 3 <nil>
}
