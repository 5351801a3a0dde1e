package mcp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/app/workspace"
)

// binaryContent applies the convention agreed with the base skill
// (read_image_file, read_pdf_file): a result that is a JSON object with
// exactly the keys mime_type and data (standard base64) is bytes. An
// image/* type becomes MCP image content; anything else an embedded
// resource with a blob. structuredContent then says what the bytes are
// instead of repeating them.
func binaryContent(t *workspace.ToolRef, value []byte) (sdkmcp.Content, json.RawMessage, bool) {
	if len(value) == 0 || value[0] != '{' || !bytes.Contains(value, []byte(`"mime_type"`)) {
		return nil, nil, false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(value, &fields) != nil || len(fields) != 2 || fields["mime_type"] == nil || fields["data"] == nil {
		return nil, nil, false
	}
	var mime, data string
	if json.Unmarshal(fields["mime_type"], &mime) != nil || json.Unmarshal(fields["data"], &data) != nil || mime == "" {
		return nil, nil, false
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, nil, false
	}
	meta, _ := json.Marshal(map[string]any{"mime_type": mime, "bytes": len(raw)})
	if strings.HasPrefix(mime, "image/") {
		return &sdkmcp.ImageContent{MIMEType: mime, Data: raw}, meta, true
	}
	return &sdkmcp.EmbeddedResource{Resource: &sdkmcp.ResourceContents{
		URI:      "agent://result/" + t.Skill + "/" + t.Name,
		MIMEType: mime,
		Blob:     raw,
	}}, meta, true
}
