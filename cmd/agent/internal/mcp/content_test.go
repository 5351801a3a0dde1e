package mcp

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/app/workspace"
)

func TestBinaryContentConvention(t *testing.T) {
	t.Parallel()
	ref := &workspace.ToolRef{Skill: "base", Name: "read_pdf_file"}
	data := base64.StdEncoding.EncodeToString([]byte("bytes"))
	cases := []struct {
		name  string
		value string
		want  string // "image", "resource" or "" (not bytes)
	}{
		{"image", `{"mime_type":"image/png","data":"` + data + `"}`, "image"},
		{"pdf", `{"data":"` + data + `","mime_type":"application/pdf"}`, "resource"},
		{"extra key", `{"mime_type":"image/png","data":"` + data + `","path":"a.png"}`, ""},
		{"bad base64", `{"mime_type":"image/png","data":"%%%"}`, ""},
		{"empty type", `{"mime_type":"","data":"` + data + `"}`, ""},
		{"not strings", `{"mime_type":1,"data":2}`, ""},
		{"array", `["mime_type","data"]`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, meta, ok := binaryContent(ref, []byte(tc.value))
			got := ""
			switch c.(type) {
			case *sdkmcp.ImageContent:
				got = "image"
			case *sdkmcp.EmbeddedResource:
				got = "resource"
			}
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("binaryContent(%s) = %T, %v; want %q", tc.value, c, ok, tc.want)
			}
			if ok && !json.Valid(meta) {
				t.Errorf("meta %s", meta)
			}
		})
	}
}

// FuzzToolResult: any bytes a plugin returns become a result whose
// structuredContent is a JSON object, and never a panic.
func FuzzToolResult(f *testing.F) {
	for _, s := range []string{`{"mime_type":"image/png","data":"aGk="}`, `"text"`, `[1,2]`, `{"a":1}`, ``, `null`, `{"mime_type":"x/y","data":"aGk="}`} {
		f.Add([]byte(s))
	}
	ref := &workspace.ToolRef{Skill: "s", Name: "t"}
	f.Fuzz(func(t *testing.T, value []byte) {
		if !json.Valid(value) && len(value) > 0 {
			return // the host hands over JSON only
		}
		res := toolResult(workspace.Outcome{Tool: ref, Value: value})
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatalf("structuredContent of %q does not marshal: %v", value, err)
		}
		var obj map[string]any
		if err := json.Unmarshal(b, &obj); err != nil {
			t.Fatalf("structuredContent of %q is %s, not an object", value, b)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("result of %q does not marshal: %v", value, err)
		}
	})
}

// FuzzObjectSchema: whatever a registry holds, the listed schema is an
// object schema go-sdk accepts.
func FuzzObjectSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `{"type":"string"}`, ``, `null`, `{"type":["object"]}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var head struct {
			Type any `json:"type"`
		}
		out := objectSchema(raw)
		if err := json.Unmarshal(out, &head); err != nil || head.Type != "object" {
			t.Fatalf("objectSchema(%q) = %s", raw, out)
		}
	})
}
