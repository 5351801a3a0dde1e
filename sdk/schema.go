package sdk

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// node is the in-memory form of a tool's input schema. It is built once per
// tool by NewTool and used twice: marshalled into ToolInfo.InputSchema, and
// walked to validate arguments before the handler sees them.
type node struct {
	typ      string // "string", "number", "integer", "boolean", "array", "object"; "" = any value
	nullable bool   // pointer fields also accept null
	// omitNull leaves "null" out of the published type of an omitempty or
	// omitzero field: omitting it is how a caller leaves it unset, and
	// encoding/json never writes null there. A type list such as
	// ["boolean","null"] is what MCP clients port worst (the inspector
	// warns on it). check still accepts an explicit null, which decodes
	// to the same unset value.
	omitNull bool
	desc     string
	format   string

	// numbers: bit size and signedness, so that range errors name the field.
	bits     int
	unsigned bool

	// objects
	props    map[string]*node
	order    []string // property names in field order, for messages
	required []string
	closed   bool  // additionalProperties: false (structs)
	values   *node // map values (additionalProperties: schema)

	// arrays
	items *node
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// schemaFor builds the schema of a tool input type. The type must be a
// struct or a pointer to one, because tool arguments are a JSON object.
func schemaFor(t reflect.Type) (*node, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool input must be a struct, got %s", t)
	}
	b := &builder{visiting: map[reflect.Type]bool{}}
	return b.build(t)
}

type builder struct {
	visiting map[reflect.Type]bool
}

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

func (b *builder) build(t reflect.Type) (*node, error) {
	switch {
	case t == timeType:
		return &node{typ: "string", format: "date-time"}, nil
	case t == rawMessageType:
		return &node{}, nil
	case implements(t, jsonUnmarshaler):
		// The type decodes itself; we cannot know its shape.
		return &node{}, nil
	case implements(t, textUnmarshaler):
		return &node{typ: "string"}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return &node{typ: "string"}, nil
	case reflect.Bool:
		return &node{typ: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &node{typ: "integer", bits: t.Bits()}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &node{typ: "integer", bits: t.Bits(), unsigned: true}, nil
	case reflect.Float32, reflect.Float64:
		return &node{typ: "number", bits: t.Bits()}, nil
	case reflect.Interface:
		return &node{}, nil
	case reflect.Pointer:
		n, err := b.build(t.Elem())
		if err != nil {
			return nil, err
		}
		c := *n
		c.nullable = true
		return &c, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			// encoding/json sends []byte as base64 text.
			return &node{typ: "string", format: "byte"}, nil
		}
		items, err := b.build(t.Elem())
		if err != nil {
			return nil, err
		}
		return &node{typ: "array", items: items}, nil
	case reflect.Map:
		k := t.Key().Kind()
		if k != reflect.String && !implements(t.Key(), textUnmarshaler) &&
			(k < reflect.Int || k > reflect.Uintptr) {
			return nil, fmt.Errorf("map key type %s cannot come from JSON", t.Key())
		}
		values, err := b.build(t.Elem())
		if err != nil {
			return nil, err
		}
		return &node{typ: "object", values: values}, nil
	case reflect.Struct:
		if b.visiting[t] {
			// A recursive type: accept any value at the point of recursion
			// rather than emitting an infinite schema.
			return &node{}, nil
		}
		b.visiting[t] = true
		defer delete(b.visiting, t)
		n := &node{typ: "object", props: map[string]*node{}, closed: true}
		if err := b.fields(n, t, true); err != nil {
			return nil, err
		}
		return n, nil
	default:
		return nil, fmt.Errorf("type %s cannot come from JSON", t)
	}
}

// fields adds t's JSON fields to n, following encoding/json: exported
// fields, `json:"-"` skipped, anonymous struct fields without a name
// promoted. Shallower fields win over promoted ones.
func (b *builder) fields(n *node, t reflect.Type, requiredOK bool) error {
	var embedded []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, f)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := n.props[name]; dup {
			continue
		}
		child, err := b.build(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d, ok := f.Tag.Lookup("description"); ok {
			c := *child
			c.desc = d
			child = &c
		}
		omits := hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero")
		if omits {
			c := *child
			c.omitNull = true
			child = &c
		}
		n.props[name] = child
		n.order = append(n.order, name)
		optional := f.Type.Kind() == reflect.Pointer || omits
		if requiredOK && !optional {
			n.required = append(n.required, name)
		}
	}
	for _, f := range embedded {
		ft := f.Type
		viaPointer := ft.Kind() == reflect.Pointer
		if viaPointer {
			ft = ft.Elem()
		}
		if b.visiting[ft] {
			continue
		}
		b.visiting[ft] = true
		err := b.fields(n, ft, requiredOK && !viaPointer)
		delete(b.visiting, ft)
		if err != nil {
			return err
		}
	}
	return nil
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// jsonValue renders the schema as a JSON Schema (2020-12 subset) value.
func (n *node) jsonValue() map[string]any {
	m := map[string]any{}
	switch {
	case n.typ == "":
	case n.nullable && !n.omitNull:
		m["type"] = []string{n.typ, "null"}
	default:
		m["type"] = n.typ
	}
	if n.desc != "" {
		m["description"] = n.desc
	}
	if n.format != "" {
		m["format"] = n.format
	}
	if n.unsigned {
		m["minimum"] = 0
	}
	if n.items != nil {
		m["items"] = n.items.jsonValue()
	}
	if n.typ == "object" {
		if n.props != nil {
			props := make(map[string]any, len(n.props))
			for k, v := range n.props {
				props[k] = v.jsonValue()
			}
			m["properties"] = props
		}
		if len(n.required) > 0 {
			m["required"] = n.required
		}
		switch {
		case n.values != nil:
			m["additionalProperties"] = n.values.jsonValue()
		case n.closed:
			m["additionalProperties"] = false
		}
	}
	return m
}

func (n *node) marshal() json.RawMessage {
	b, err := json.Marshal(n.jsonValue())
	if err != nil {
		panic("sdk: marshal schema: " + err.Error()) // only maps, strings and bools
	}
	return b
}

// validateArgs checks raw tool arguments against the schema and returns an
// *Error{invalid_args} that names the first failing field.
func (n *node) validateArgs(args json.RawMessage) *Error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Errorf(CodeInvalidArgs, "arguments are not valid JSON: %v", err)
	}
	if rest := bytes.TrimSpace(args[dec.InputOffset():]); len(rest) > 0 {
		return Errorf(CodeInvalidArgs, "arguments must be a single JSON object, found more data after it")
	}
	if _, ok := v.(map[string]any); !ok {
		return Errorf(CodeInvalidArgs, "arguments must be a JSON object, got %s", jsonKind(v))
	}
	if msg := n.check("", v); msg != "" {
		return &Error{Code: CodeInvalidArgs, Message: msg}
	}
	return nil
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if isIntegerLiteral(string(v)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func isIntegerLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func where(path string) string {
	if path == "" {
		return "arguments"
	}
	return fmt.Sprintf("field %q", path)
}

// check returns "" when v matches n, else a message naming the field.
func (n *node) check(path string, v any) string {
	if v == nil {
		if n.typ == "" || n.nullable {
			return ""
		}
		return fmt.Sprintf("%s must not be null: expected %s", where(path), n.typ)
	}
	switch n.typ {
	case "":
		return ""
	case "string", "boolean":
		if got := jsonKind(v); got != n.typ {
			return fmt.Sprintf("%s: expected %s, got %s", where(path), n.typ, got)
		}
	case "number":
		num, ok := v.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: expected number, got %s", where(path), jsonKind(v))
		}
		if _, err := strconv.ParseFloat(string(num), n.bits); err != nil {
			return fmt.Sprintf("%s: %s is out of range for a %d-bit number", where(path), num, n.bits)
		}
	case "integer":
		num, ok := v.(json.Number)
		if !ok || !isIntegerLiteral(string(num)) {
			return fmt.Sprintf("%s: expected integer, got %s", where(path), jsonKind(v))
		}
		var err error
		if n.unsigned {
			_, err = strconv.ParseUint(string(num), 10, n.bits)
		} else {
			_, err = strconv.ParseInt(string(num), 10, n.bits)
		}
		if err != nil {
			kind := "integer"
			if n.unsigned {
				kind = "non-negative integer"
			}
			return fmt.Sprintf("%s: %s is out of range for a %d-bit %s", where(path), num, n.bits, kind)
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("%s: expected array, got %s", where(path), jsonKind(v))
		}
		for i, e := range arr {
			if msg := n.items.check(fmt.Sprintf("%s[%d]", path, i), e); msg != "" {
				return msg
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: expected object, got %s", where(path), jsonKind(v))
		}
		if n.values != nil {
			keys := sortedKeys(obj)
			for _, k := range keys {
				if msg := n.values.check(join(path, k), obj[k]); msg != "" {
					return msg
				}
			}
			return ""
		}
		for _, r := range n.required {
			if _, ok := obj[r]; !ok {
				return fmt.Sprintf("missing required field %q", join(path, r))
			}
		}
		for _, k := range sortedKeys(obj) {
			child, ok := n.props[k]
			if !ok {
				if n.closed {
					if len(n.order) == 0 {
						return fmt.Sprintf("unknown field %q: this takes no fields", join(path, k))
					}
					known := slices.Clone(n.order)
					sort.Strings(known)
					return fmt.Sprintf("unknown field %q (known fields: %s)", join(path, k), strings.Join(known, ", "))
				}
				continue
			}
			if msg := child.check(join(path, k), obj[k]); msg != "" {
				return msg
			}
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
