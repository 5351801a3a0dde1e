package workspace

import (
	"encoding/json"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/sdk"
)

// RegistryTool is what the registry caches of a tool a plugin described,
// so that listing tools (with their titles, annotations and output
// schemas) starts no process.
func RegistryTool(t sdk.ToolInfo) registry.Tool {
	var ann json.RawMessage
	if t.Annotations != nil {
		ann, _ = json.Marshal(t.Annotations)
	}
	return registry.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
		Title: t.Title, Annotations: ann, OutputSchema: t.OutputSchema}
}

// toolInfo is RegistryTool undone. Annotations that do not decode are
// dropped: they are hints.
func toolInfo(t registry.Tool) sdk.ToolInfo {
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
