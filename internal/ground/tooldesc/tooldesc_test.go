package tooldesc

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentskills/agent/sdk"
)

func TestInfoUndoesFromInfo(t *testing.T) {
	no := false
	tests := []struct {
		name string
		info sdk.ToolInfo
	}{
		{"bare", sdk.ToolInfo{Name: "greet", Description: "says hello"}},
		{"everything", sdk.ToolInfo{Name: "rm", Description: "removes", Title: "Remove",
			InputSchema:  json.RawMessage(`{"type":"object"}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
			Annotations:  &sdk.Annotations{Idempotent: true, Destructive: &no}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FromInfo(tt.info).Info(); !reflect.DeepEqual(got, tt.info) {
				t.Fatalf("Info(FromInfo(x)) = %+v, want %+v", got, tt.info)
			}
		})
	}
}

// The cache is the SDK's JSON: a registry.json tool reads as the plugin
// described it.
func TestToolJSONIsTheSDKs(t *testing.T) {
	yes := true
	info := sdk.ToolInfo{Name: "fetch", Description: "gets", Title: "Fetch",
		Annotations: &sdk.Annotations{ReadOnly: true, OpenWorld: &yes}}
	want, err := json.Marshal(info)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(FromInfo(info))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("cached tool JSON = %s, want the SDK's %s", got, want)
	}
}

func TestAnnotationsThatDoNotDecodeAreDropped(t *testing.T) {
	info := Tool{Name: "x", Annotations: json.RawMessage(`"not an object"`)}.Info()
	if info.Annotations != nil || info.Name != "x" {
		t.Fatalf("Info() = %+v, want the tool without annotations", info)
	}
}
