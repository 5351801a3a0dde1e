package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestFrontmatterValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		md   string
		want string // JSON; "" when an error is wanted
	}{
		{"plain", "---\nname: a\ndescription: d\n---\nbody\n", `{"name":"a","description":"d"}`},
		{"date stays a string", "---\nname: a\ndescription: d\nreleased: 2024-01-02\nat: 2024-01-02T10:00:00Z\n---\n", `{"name":"a","description":"d","released":"2024-01-02","at":"2024-01-02T10:00:00Z"}`},
		{"core schema", "---\nname: a\ndescription: d\nn: 12\nf: 1.5\no: 0o17\nx: 0x1f\nt: True\nno: no\nnil: ~\ny: yes\nlead: 017\n---\n", `{"name":"a","description":"d","n":12,"f":1.5,"o":15,"x":31,"t":true,"no":"no","nil":null,"y":"yes","lead":17}`},
		{"quoted stays a string", "---\nname: a\ndescription: d\nv: \"12\"\nw: 'true'\n---\n", `{"name":"a","description":"d","v":"12","w":"true"}`},
		{"nested", "---\nname: a\ndescription: d\nmetadata:\n  version: \"2.1\"\n  tags: [x, 2]\n---\n", `{"name":"a","description":"d","metadata":{"version":"2.1","tags":["x",2]}}`},
		{"block scalar", "---\nname: a\ndescription: |\n  line one\n  line two\n---\n", `{"name":"a","description":"line one\nline two\n"}`},
		{"CRLF and BOM", "\ufeff---\r\nname: a\r\ndescription: d\r\n---\r\n", `{"name":"a","description":"d"}`},
		{"no frontmatter", "# Title\n", ""},
		{"never closed", "---\nname: a\n", ""},
		{"not a mapping", "---\n- a\n---\n", ""},
		{"infinity", "---\nname: a\nv: .inf\n---\n", ""},
		{"duplicate key", "---\nname: a\nname: b\n---\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := frontmatterValues([]byte(tt.md))
			if tt.want == "" {
				if err == nil {
					t.Fatalf("got %v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			var back map[string]any
			_ = json.Unmarshal(b, &back)
			if !reflect.DeepEqual(back, want) {
				t.Errorf("got %s, want %s", b, tt.want)
			}
		})
	}
}

// FuzzFrontmatterValues: any input gives an object that is JSON, or an
// error; never a panic.
func FuzzFrontmatterValues(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\nreleased: 2024-01-02\n---\n"))
	f.Add([]byte("---\nname: a\nm: {a: [1, 2.5, ~, yes, 0o7]}\n---\n"))
	f.Add([]byte("---\na: &x 1\nb: *x\n---\n"))
	f.Fuzz(func(t *testing.T, md []byte) {
		v, err := frontmatterValues(md)
		if err != nil {
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("rendered %v is not JSON: %v", v, err)
		}
	})
}
