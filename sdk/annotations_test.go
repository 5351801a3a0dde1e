package sdk

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestToolOptions(t *testing.T) {
	type out struct {
		Text  string   `json:"text"`
		Items []string `json:"items"`
		Tags  []string `json:"tags,omitempty"`
		Note  *string  `json:"note,omitempty"`
	}
	f := func(context.Context, struct{}) (out, error) { return out{}, nil }
	tests := []struct {
		name  string
		tool  Tool
		title string
		ann   *Annotations
	}{
		{"none", NewTool("a", "d", f), "", nil},
		{"read only", NewTool("a", "d", f, WithTitle("A"), ReadOnly(), Idempotent(), OpenWorld(false)), "A",
			&Annotations{ReadOnly: true, Destructive: new(false), Idempotent: true, OpenWorld: new(false)}},
		{"destructive", NewTool("a", "d", f, Destructive(true)), "", &Annotations{Destructive: new(true)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := tt.tool.Info()
			if info.Title != tt.title || !reflect.DeepEqual(info.Annotations, tt.ann) {
				t.Errorf("title %q annotations %+v, want %q %+v", info.Title, info.Annotations, tt.title, tt.ann)
			}
			// Through the wire form and back, as describe carries them.
			if got := unmarshalAnnotations(info.Annotations.marshal()); !reflect.DeepEqual(got, tt.ann) {
				t.Errorf("after the wire: %+v, want %+v", got, tt.ann)
			}
		})
	}
}

func TestOutputSchema(t *testing.T) {
	type out struct {
		Text  string   `json:"text"`
		Items []string `json:"items"`
		Tags  []string `json:"tags,omitempty"`
		Note  *string  `json:"note,omitempty"`
	}
	withStruct := NewTool("a", "d", func(context.Context, struct{}) (out, error) { return out{}, nil }).Info()
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(withStruct.OutputSchema, &s); err != nil || s.Type != "object" || len(s.Required) != 2 {
		t.Fatalf("output schema %s: %v", withStruct.OutputSchema, err)
	}
	// encoding/json writes a nil slice as null.
	if string(s.Properties["items"]) == "" || !json.Valid(s.Properties["items"]) || !strings.Contains(string(s.Properties["items"]), `"null"`) {
		t.Errorf("items schema %s must accept null", s.Properties["items"])
	}
	// With omitempty encoding/json leaves a nil slice or pointer out.
	for name, want := range map[string]string{"tags": `{"items":{"type":"string"},"type":"array"}`, "note": `{"type":"string"}`} {
		if got := string(s.Properties[name]); got != want {
			t.Errorf("%s schema %s, want %s", name, got, want)
		}
	}
	withString := NewTool("b", "d", func(context.Context, struct{}) (string, error) { return "", nil }).Info()
	if withString.OutputSchema != nil {
		t.Errorf("a string result has output schema %s", withString.OutputSchema)
	}
}
