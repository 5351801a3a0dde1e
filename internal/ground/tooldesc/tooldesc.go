package tooldesc

import (
	"encoding/json"

	"github.com/agentskills/agent/sdk"
)

// Tool is one cached tool description. The JSON names are the SDK's, and
// Annotations is the SDK's Annotations as JSON, so that a registry.json
// written by one agent version reads in the next even when the SDK grows a
// hint.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Title, Annotations (the SDK's JSON) and OutputSchema travel from the
	// plugin's describe to MCP clients.
	Title        string          `json:"title,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// FromInfo is what the registry caches of t.
func FromInfo(t sdk.ToolInfo) Tool {
	var ann json.RawMessage
	if t.Annotations != nil {
		ann, _ = json.Marshal(t.Annotations) // a struct of bools: cannot fail
	}
	return Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		Title: t.Title, Annotations: ann, OutputSchema: t.OutputSchema}
}

// Info is FromInfo undone. Annotations that do not decode are dropped:
// they are hints.
func (t Tool) Info() sdk.ToolInfo {
	var ann *sdk.Annotations
	if len(t.Annotations) > 0 {
		var a sdk.Annotations
		if json.Unmarshal(t.Annotations, &a) == nil {
			ann = &a
		}
	}
	return sdk.ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		Title: t.Title, Annotations: ann, OutputSchema: t.OutputSchema}
}
