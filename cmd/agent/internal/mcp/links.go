package mcp

import (
	"encoding/json"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// withResourceLinks appends to a use_skill result a resource link to each
// file of the skill it loaded, so that a client can read the references
// and scripts the instructions name (Layer 3) with resources/read.
func withResourceLinks(gen *generation, value json.RawMessage, out *sdkmcp.CallToolResult) {
	var r struct {
		Skill string `json:"skill"`
	}
	if json.Unmarshal(value, &r) != nil || gen.trees[r.Skill] == nil {
		return
	}
	tree := gen.trees[r.Skill]
	for _, f := range tree.files {
		out.Content = append(out.Content, &sdkmcp.ResourceLink{
			URI:      ResourceURI(tree.name, f),
			Name:     tree.name + "/" + f,
			MIMEType: mimeOf(f),
		})
	}
}
