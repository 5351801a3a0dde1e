package mcp

import (
	"encoding/json"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/sdk"
)

// mcpTool is the MCP form of a described tool: name, description, input
// schema, and the title, annotations and output schema its author set in
// the SDK (sdk.NewTool options; SPEC §13).
func mcpTool(name string, info sdk.ToolInfo) *sdkmcp.Tool {
	t := &sdkmcp.Tool{
		Name:        name,
		Title:       info.Title,
		Description: info.Description,
		InputSchema: objectSchema(info.InputSchema),
	}
	if a := info.Annotations; a != nil || info.Title != "" {
		t.Annotations = &sdkmcp.ToolAnnotations{Title: info.Title}
		if a != nil {
			t.Annotations.ReadOnlyHint = a.ReadOnly
			t.Annotations.DestructiveHint = a.Destructive
			t.Annotations.IdempotentHint = a.Idempotent
			t.Annotations.OpenWorldHint = a.OpenWorld
		}
	}
	if s := outputSchema(info.OutputSchema); s != nil {
		t.OutputSchema = s
	}
	return t
}

// outputSchema is the tool's output schema as MCP takes it: an object
// schema, and not the {mime_type, data} of a binary result, whose
// structuredContent says what the bytes are instead (binaryContent).
func outputSchema(raw json.RawMessage) json.RawMessage {
	var head struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &head) != nil || head.Type != "object" {
		return nil
	}
	if _, ok := head.Properties["mime_type"]; ok && len(head.Properties) == 2 && head.Properties["data"] != nil {
		return nil
	}
	return raw
}
