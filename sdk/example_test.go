package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/agentskills/agent/sdk"
	"github.com/hashicorp/go-hclog"
)

type greetIn struct {
	Name     string `json:"name" description:"who to greet"`
	Language string `json:"language,omitempty" description:"ISO 639-1 code, default en"`
}

func greet(_ context.Context, in greetIn) (string, error) {
	if in.Language == "fr" {
		return "Bonjour, " + in.Name + "!", nil
	}
	return "Hello, " + in.Name + "!", nil
}

// A plugin's main is one call: Serve runs the skill until the host stops it.
// Started by hand, outside a host, Serve says it is a plugin and exits 1.
func ExampleServe() {
	sdk.Serve(sdk.NewSkill(sdk.NewTool("greet", "Greet someone.", greet)))
}

// Options tune the process: here a logger of the author's own (the host
// shows plugin logs at AGENT_PLUGIN_LOG_LEVEL) and no memory trimming.
func ExampleServe_options() {
	logger := hclog.New(&hclog.LoggerOptions{Name: "greet", Level: hclog.Debug, Output: os.Stderr, JSONFormat: true})
	sdk.Serve(sdk.NewSkill(sdk.NewTool("greet", "Greet someone.", greet)),
		sdk.WithLogger(logger),
		sdk.WithIdleTrim(0),
	)
}

// NewTool derives the input schema from the struct: `json` names the
// property, `description` describes it, and omitempty makes it optional.
func ExampleNewTool() {
	tool := sdk.NewTool("greet", "Greet someone.", greet)
	info := tool.Info()
	fmt.Println(info.Name, "-", info.Description)
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(info.InputSchema, &schema); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("required:", schema.Required)
	fmt.Println("language:", string(schema.Properties["language"]))
	// Output:
	// greet - Greet someone.
	// required: [name]
	// language: {"description":"ISO 639-1 code, default en","type":"string"}
}

// A skill checks arguments against the schema before the handler runs, so
// a handler never sees a missing required field.
func ExampleNewSkill() {
	s := sdk.NewSkill(sdk.NewTool("greet", "Greet someone.", greet))
	ctx := context.Background()

	res, err := s.Invoke(ctx, "greet", json.RawMessage(`{"name":"Ada","language":"fr"}`))
	fmt.Println(string(res.Value), err)

	_, err = s.Invoke(ctx, "greet", json.RawMessage(`{"language":"fr"}`))
	var e *sdk.Error
	fmt.Println(errors.As(err, &e), e.Code)
	// Output:
	// "Bonjour, Ada!" <nil>
	// true invalid_args
}

// A handler returns an *sdk.Error to give the caller a code it can act on;
// any other error becomes tool_failed.
func ExampleErrorf() {
	lookup := sdk.NewTool("lookup", "Look a key up.", func(_ context.Context, in struct {
		Key string `json:"key"`
	}) (string, error) {
		if !strings.HasPrefix(in.Key, "k") {
			return "", sdk.Errorf("not_found", "no key %q; keys start with k", in.Key)
		}
		return "value of " + in.Key, nil
	})
	_, err := sdk.NewSkill(lookup).Invoke(context.Background(), "lookup", json.RawMessage(`{"key":"x"}`))
	fmt.Println(err)
	// Output:
	// not_found: no key "x"; keys start with k
}

// Note attaches a message to a successful result, for example to say that
// output was cut.
func ExampleNote() {
	head := sdk.NewTool("head", "First 5 bytes of a text.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		if len(in.Text) > 5 {
			sdk.Note(ctx, fmt.Sprintf("cut %d bytes", len(in.Text)-5))
			return in.Text[:5], nil
		}
		return in.Text, nil
	})
	res, _ := sdk.NewSkill(head).Invoke(context.Background(), "head", json.RawMessage(`{"text":"hello, world"}`))
	fmt.Println(string(res.Value), "|", res.Message)
	// Output:
	// "hello" | cut 7 bytes
}
