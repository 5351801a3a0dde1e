package sdk

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Level int `json:"level" description:"how loud"`
}

type Embedded struct {
	Shared string `json:"shared"`
}

type allKinds struct {
	Embedded
	Name     string            `json:"name" description:"who to greet"`
	Count    int               `json:"count,omitempty"`
	Ratio    float64           `json:"ratio"`
	Loud     bool              `json:"loud"`
	Tags     []string          `json:"tags"`
	Labels   map[string]int    `json:"labels,omitempty"`
	Inner    inner             `json:"inner"`
	Opt      *inner            `json:"opt"`
	Flag     *bool             `json:"flag,omitempty"`
	Limit    *int              `json:"limit,omitzero"`
	When     time.Time         `json:"when,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	Any      any               `json:"any,omitempty"`
	Small    uint8             `json:"small,omitempty"`
	Data     []byte            `json:"data,omitempty"`
	Skipped  string            `json:"-"`
	NoTag    string            `json:",omitempty"`
	Matrix   [][]float64       `json:"matrix,omitempty"`
	Nested   map[string][]bool `json:"nested,omitzero"`
	internal string
}

type recursive struct {
	Name     string      `json:"name"`
	Children []recursive `json:"children,omitempty"`
}

func schemaJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	n, err := schemaFor(reflect.TypeOf(v))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(n.marshal(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSchemaFor(t *testing.T) {
	t.Parallel()
	s := schemaJSON(t, allKinds{})
	props := s["properties"].(map[string]any)
	tests := []struct {
		name string
		got  any
		want string
	}{
		{name: "root", got: map[string]any{"type": s["type"], "additionalProperties": s["additionalProperties"]}, want: `{"additionalProperties":false,"type":"object"}`},
		{name: "required", got: s["required"], want: `["name","ratio","loud","tags","inner","shared"]`},
		{name: "string with description", got: props["name"], want: `{"description":"who to greet","type":"string"}`},
		{name: "integer", got: props["count"], want: `{"type":"integer"}`},
		{name: "number", got: props["ratio"], want: `{"type":"number"}`},
		{name: "boolean", got: props["loud"], want: `{"type":"boolean"}`},
		{name: "array", got: props["tags"], want: `{"items":{"type":"string"},"type":"array"}`},
		{name: "map", got: props["labels"], want: `{"additionalProperties":{"type":"integer"},"type":"object"}`},
		{name: "nested struct", got: props["inner"], want: `{"additionalProperties":false,"properties":{"level":{"description":"how loud","type":"integer"}},"required":["level"],"type":"object"}`},
		{name: "pointer is nullable", got: props["opt"], want: `{"additionalProperties":false,"properties":{"level":{"description":"how loud","type":"integer"}},"required":["level"],"type":["object","null"]}`},
		{name: "omitempty pointer is the plain type", got: props["flag"], want: `{"type":"boolean"}`},
		{name: "omitzero pointer is the plain type", got: props["limit"], want: `{"type":"integer"}`},
		{name: "time", got: props["when"], want: `{"format":"date-time","type":"string"}`},
		{name: "raw message is any", got: props["raw"], want: `{}`},
		{name: "interface is any", got: props["any"], want: `{}`},
		{name: "unsigned", got: props["small"], want: `{"minimum":0,"type":"integer"}`},
		{name: "bytes", got: props["data"], want: `{"format":"byte","type":"string"}`},
		{name: "skipped", got: props["Skipped"], want: `null`},
		{name: "field name without tag name", got: props["NoTag"], want: `{"type":"string"}`},
		{name: "nested arrays", got: props["matrix"], want: `{"items":{"items":{"type":"number"},"type":"array"},"type":"array"}`},
		{name: "map of arrays", got: props["nested"], want: `{"additionalProperties":{"items":{"type":"boolean"},"type":"array"},"type":"object"}`},
		{name: "embedded promoted", got: props["shared"], want: `{"type":"string"}`},
		{name: "unexported", got: props["internal"], want: `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := json.Marshal(tc.got)
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

func TestSchemaForRecursive(t *testing.T) {
	t.Parallel()
	s := schemaJSON(t, recursive{})
	b, _ := json.Marshal(s["properties"].(map[string]any)["children"])
	if string(b) != `{"items":{},"type":"array"}` {
		t.Errorf("recursive field schema %s", b)
	}
}

func TestSchemaForRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{name: "not a struct", typ: reflect.TypeFor[string](), want: "must be a struct"},
		{name: "channel field", typ: reflect.TypeFor[struct{ C chan int }](), want: "field C"},
		{name: "func field", typ: reflect.TypeFor[struct{ F func() }](), want: "cannot come from JSON"},
		{name: "bad map key", typ: reflect.TypeFor[struct{ M map[[2]int]string }](), want: "map key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := schemaFor(tc.typ)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

type greetIn struct {
	Name     string            `json:"name"`
	Language string            `json:"language,omitempty"`
	Times    int8              `json:"times,omitempty"`
	Names    []string          `json:"names,omitempty"`
	Opts     *inner            `json:"opts,omitempty"`
	Loud     *bool             `json:"loud,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
	Ratio    float32           `json:"ratio,omitempty"`
	N        uint              `json:"n,omitempty"`
}

func TestValidateArgs(t *testing.T) {
	t.Parallel()
	n, err := schemaFor(reflect.TypeFor[greetIn]())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args string
		want string // "" = valid; else a substring of the message
	}{
		{name: "minimal", args: `{"name":"ada"}`},
		{name: "all fields", args: `{"name":"ada","language":"fr","times":3,"names":["a","b"],"opts":{"level":1},"meta":{"k":"v"},"ratio":1.5,"n":7}`},
		{name: "null pointer", args: `{"name":"ada","opts":null}`},
		{name: "null for an omitempty pointer published without null", args: `{"name":"ada","loud":null}`},
		{name: "omitempty pointer of the wrong type", args: `{"name":"ada","loud":"yes"}`, want: `field "loud": expected boolean, got string`},
		{name: "empty args is an empty object", args: ``, want: `missing required field "name"`},
		{name: "missing required", args: `{}`, want: `missing required field "name"`},
		{name: "wrong type", args: `{"name":3}`, want: `field "name": expected string, got integer`},
		{name: "null for non-pointer", args: `{"name":null}`, want: `field "name" must not be null`},
		{name: "unknown field", args: `{"name":"a","nmae":"b"}`, want: `unknown field "nmae" (known fields: language, loud, meta, n, name, names, opts, ratio, times)`},
		{name: "field names are case-sensitive", args: `{"Name":"a"}`, want: `missing required field "name"`},
		{name: "array element", args: `{"name":"a","names":["x",2]}`, want: `field "names[1]": expected string, got integer`},
		{name: "nested missing", args: `{"name":"a","opts":{}}`, want: `missing required field "opts.level"`},
		{name: "nested unknown", args: `{"name":"a","opts":{"level":1,"x":2}}`, want: `unknown field "opts.x"`},
		{name: "map value", args: `{"name":"a","meta":{"k":1}}`, want: `field "meta.k": expected string, got integer`},
		{name: "integer with fraction", args: `{"name":"a","times":1.5}`, want: `field "times": expected integer, got number`},
		{name: "integer overflow", args: `{"name":"a","times":300}`, want: `out of range for a 8-bit integer`},
		{name: "negative unsigned", args: `{"name":"a","n":-1}`, want: `out of range`},
		{name: "number from string", args: `{"name":"a","ratio":"1"}`, want: `field "ratio": expected number, got string`},
		{name: "not an object", args: `["name"]`, want: `arguments must be a JSON object, got array`},
		{name: "null args", args: `null`, want: `arguments must be a JSON object, got null`},
		{name: "invalid json", args: `{"name":`, want: `not valid JSON`},
		{name: "trailing data", args: `{"name":"a"} {}`, want: `more data`},
		{name: "trailing brace", args: `{"name":"a"}}`, want: `more data`},
		{name: "float overflow", args: `{"name":"a","ratio":1e300}`, want: `out of range for a 32-bit number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := n.validateArgs(json.RawMessage(tc.args))
			switch {
			case tc.want == "" && e != nil:
				t.Fatalf("unexpected error %v", e)
			case tc.want != "" && e == nil:
				t.Fatalf("no error, want %q", tc.want)
			case e != nil && (e.Code != CodeInvalidArgs || !strings.Contains(e.Message, tc.want)):
				t.Fatalf("got %v, want invalid_args %q", e, tc.want)
			}
		})
	}
}

func TestValidateNoFields(t *testing.T) {
	t.Parallel()
	n, _ := schemaFor(reflect.TypeFor[struct{}]())
	if e := n.validateArgs(json.RawMessage(`{}`)); e != nil {
		t.Fatal(e)
	}
	if e := n.validateArgs(json.RawMessage(`{"x":1}`)); e == nil || !strings.Contains(e.Message, "takes no fields") {
		t.Fatalf("got %v", e)
	}
}

// FuzzValidateArgs: validation never panics, and whatever it accepts
// decodes into the Go type without error.
func FuzzValidateArgs(f *testing.F) {
	for _, s := range []string{`{"name":"ada"}`, `{"name":"a","times":3,"names":["x"],"opts":{"level":1},"meta":{"k":"v"}}`,
		`[]`, `null`, `{"name":1e400}`, `{"name":"a","n":18446744073709551615}`, `{"name":"a","opts":null}`, ``, `{`} {
		f.Add([]byte(s))
	}
	n, err := schemaFor(reflect.TypeFor[greetIn]())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if e := n.validateArgs(b); e != nil {
			return
		}
		var v greetIn
		if len(b) == 0 {
			return
		}
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("validated %q but decode failed: %v", b, err)
		}
	})
}
