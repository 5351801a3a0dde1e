package sdk

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The SDK keeps its own schema inference and validation (docs/design.md,
// "JSON Schema"). These tests hold it to google/jsonschema-go, the library
// modelcontextprotocol/go-sdk uses: the schema a tool publishes resolves
// there, and both accept and refuse the same arguments, except where the
// SDK checks the Go type's exact range, which the published schema does not
// carry, and where it accepts an explicit null for an omitempty pointer,
// which the published schema leaves out (node.omitNull).

func resolved(t testing.TB, typ reflect.Type) (*node, *jsonschema.Resolved) {
	t.Helper()
	n, err := schemaFor(typ)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(n.marshal(), &s); err != nil {
		t.Fatalf("published schema does not load in jsonschema-go: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("published schema does not resolve in jsonschema-go: %v", err)
	}
	return n, rs
}

func TestSchemaAgreesWithJSONSchemaGo(t *testing.T) {
	t.Parallel()
	n, rs := resolved(t, reflect.TypeFor[greetIn]())
	for _, tc := range []struct {
		name, args string
		rangeOnly  bool // only the Go type's range refuses it
		nullOnly   bool // only the SDK accepts it: null for an omitempty pointer
	}{
		{name: "valid", args: `{"name":"a","language":"fr","times":2,"names":["x"],"opts":{"level":1},"meta":{"k":"v"},"ratio":0.5,"n":3}`},
		{name: "missing required", args: `{}`},
		{name: "wrong type", args: `{"name":3}`},
		{name: "null for non-pointer", args: `{"name":null}`},
		{name: "null for omitempty pointer", args: `{"name":"a","loud":null}`, nullOnly: true},
		{name: "omitempty pointer", args: `{"name":"a","loud":false}`},
		{name: "unknown field", args: `{"name":"a","nmae":"b"}`},
		{name: "array element", args: `{"name":"a","names":["x",2]}`},
		{name: "nested missing", args: `{"name":"a","opts":{}}`},
		{name: "nested unknown", args: `{"name":"a","opts":{"level":1,"x":2}}`},
		{name: "map value", args: `{"name":"a","meta":{"k":1}}`},
		{name: "integer with fraction", args: `{"name":"a","times":1.5}`},
		{name: "negative unsigned", args: `{"name":"a","n":-1}`},
		{name: "number from string", args: `{"name":"a","ratio":"1"}`},
		{name: "int8 overflow", args: `{"name":"a","times":300}`, rangeOnly: true},
		{name: "float32 overflow", args: `{"name":"a","ratio":1e300}`, rangeOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ours := n.validateArgs(json.RawMessage(tc.args)) == nil
			var v any
			if err := json.Unmarshal([]byte(tc.args), &v); err != nil {
				t.Fatal(err)
			}
			theirs := rs.Validate(v) == nil
			if tc.rangeOnly {
				if ours || !theirs {
					t.Fatalf("ours accepts=%v, jsonschema-go accepts=%v; want false, true", ours, theirs)
				}
				return
			}
			if tc.nullOnly {
				if !ours || theirs {
					t.Fatalf("ours accepts=%v, jsonschema-go accepts=%v; want true, false", ours, theirs)
				}
				return
			}
			if ours != theirs {
				t.Fatalf("ours accepts=%v, jsonschema-go accepts=%v (%v)", ours, theirs, rs.Validate(v))
			}
		})
	}
}

var benchArgs = json.RawMessage(`{"name":"Ada","language":"fr","times":2,"names":["x","y","z"],"opts":{"level":1},"meta":{"k":"v","l":"w"},"ratio":0.5,"n":3}`)

// BenchmarkValidate compares the SDK's validation of one call's arguments
// with jsonschema-go's on the same published schema (decode included in
// both: a call arrives as JSON bytes).
func BenchmarkValidate(b *testing.B) {
	n, rs := resolved(b, reflect.TypeFor[greetIn]())
	b.Run("impl=sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if e := n.validateArgs(benchArgs); e != nil {
				b.Fatal(e)
			}
		}
	})
	b.Run("impl=jsonschema-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(benchArgs, &v); err != nil {
				b.Fatal(err)
			}
			if err := rs.Validate(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInfer compares building a tool's input schema (once per tool, at
// NewTool).
func BenchmarkInfer(b *testing.B) {
	typ := reflect.TypeFor[greetIn]()
	b.Run("impl=sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n, err := schemaFor(typ)
			if err != nil {
				b.Fatal(err)
			}
			_ = n.marshal()
		}
	})
	b.Run("impl=jsonschema-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := jsonschema.ForType(typ, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
