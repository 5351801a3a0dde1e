package sdk

import (
	"encoding/json"
	"reflect"
)

// Annotations are hints on how a tool behaves, for clients that ask a
// person before a risky call (MCP ToolAnnotations). They are hints, not
// guarantees: a client must not rely on them for safety. The zero value
// says nothing, and MCP then assumes the worst: not read-only, possibly
// destructive, not idempotent, open world.
type Annotations struct {
	// ReadOnly: the tool changes nothing.
	ReadOnly bool `json:"read_only,omitempty"`
	// Destructive: the tool may delete or overwrite (meaningful when not
	// ReadOnly); nil leaves MCP's default, true.
	Destructive *bool `json:"destructive,omitempty"`
	// Idempotent: calling again with the same arguments has no further
	// effect.
	Idempotent bool `json:"idempotent,omitempty"`
	// OpenWorld: the tool reaches beyond a closed domain (the network, say);
	// nil leaves MCP's default, true.
	OpenWorld *bool `json:"open_world,omitempty"`
}

// ToolOption sets what NewTool describes beyond the name, description and
// schemas.
type ToolOption func(*ToolInfo)

// WithTitle sets the tool's display name.
func WithTitle(title string) ToolOption {
	return func(t *ToolInfo) { t.Title = title }
}

// ReadOnly marks a tool that changes nothing (so not destructive either).
func ReadOnly() ToolOption {
	return func(t *ToolInfo) {
		a := t.annotations()
		a.ReadOnly, a.Destructive = true, new(false)
	}
}

// Destructive says whether a tool that writes may delete or overwrite.
func Destructive(yes bool) ToolOption {
	return func(t *ToolInfo) { t.annotations().Destructive = new(yes) }
}

// Idempotent marks a tool that a repeated call with the same arguments
// leaves as the first call left things.
func Idempotent() ToolOption {
	return func(t *ToolInfo) { t.annotations().Idempotent = true }
}

// OpenWorld says whether the tool reaches beyond its own closed domain
// (the network, other people's systems).
func OpenWorld(yes bool) ToolOption {
	return func(t *ToolInfo) { t.annotations().OpenWorld = new(yes) }
}

func (t *ToolInfo) annotations() *Annotations {
	if t.Annotations == nil {
		t.Annotations = &Annotations{}
	}
	return t.Annotations
}

func (a *Annotations) marshal() []byte {
	if a == nil {
		return nil
	}
	b, _ := json.Marshal(a)
	return b
}

// unmarshalAnnotations reads what a plugin sent; a plugin built with an
// older SDK sends nothing, and an unreadable value is dropped, since the
// annotations are hints.
func unmarshalAnnotations(b []byte) *Annotations {
	if len(b) == 0 {
		return nil
	}
	var a Annotations
	if json.Unmarshal(b, &a) != nil {
		return nil
	}
	return &a
}

// outputSchema is the JSON Schema of a struct result type, or nil for
// another type (a tool's structured result is an object, so a string or a
// list has none). encoding/json writes a nil slice or map as null, so
// those accept null here.
func outputSchema(t reflect.Type) json.RawMessage {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	n, err := schemaFor(t)
	if err != nil {
		return nil
	}
	n.outputs(map[*node]bool{})
	return n.marshal()
}

// outputs relaxes an input schema into the schema of what encoding/json
// writes: nil slices and maps come out as null.
func (n *node) outputs(seen map[*node]bool) {
	if n == nil || seen[n] {
		return
	}
	seen[n] = true
	if n.typ == "array" || n.typ == "object" && n.values != nil {
		n.nullable = true
	}
	for _, c := range n.props {
		c.outputs(seen)
	}
	n.items.outputs(seen)
	n.values.outputs(seen)
}
