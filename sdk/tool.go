package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Tool is one typed tool, built by NewTool and served by NewSkill.
type Tool struct {
	info ToolInfo
	in   *node
	call func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// Info returns what Describe reports for the tool.
func (t Tool) Info() ToolInfo { return t.info }

// validToolName: 1-64 ASCII letters, digits, '_' or '-', the rule model
// APIs put on tool names. A loop, not a regexp: compiling {1,64} costs
// hundreds of allocations in every plugin's start-up.
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// NewTool turns a typed Go function into a tool. In must be a struct (or a
// pointer to one); its JSON schema is derived from the struct as doc.go
// describes. Out is encoded with encoding/json.
//
// NewTool panics when name is not 1-64 letters, digits, '_' or '-', or when
// In cannot be described as JSON: both are programming errors that show up
// the first time the plugin starts.
func NewTool[In, Out any](name, description string, fn func(context.Context, In) (Out, error), opts ...ToolOption) Tool {
	if !validToolName(name) {
		panic(fmt.Sprintf("sdk.NewTool: tool name %q must match ^[A-Za-z0-9_-]{1,64}$", name))
	}
	if fn == nil {
		panic(fmt.Sprintf("sdk.NewTool(%q): nil function", name))
	}
	in, err := schemaFor(reflect.TypeFor[In]())
	if err != nil {
		panic(fmt.Sprintf("sdk.NewTool(%q): %v", name, err))
	}
	info := ToolInfo{Name: name, Description: description, InputSchema: in.marshal(), OutputSchema: outputSchema(reflect.TypeFor[Out]())}
	for _, o := range opts {
		o(&info)
	}
	return Tool{
		info: info,
		in:   in,
		call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			var v In
			if len(bytes.TrimSpace(args)) > 0 {
				if err := json.Unmarshal(args, &v); err != nil {
					return nil, decodeError(err)
				}
			}
			out, err := fn(ctx, v)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(out)
			if err != nil {
				return nil, Errorf(CodeToolFailed, "encode result of %s: %v", name, err)
			}
			return b, nil
		},
	}
}

// decodeError reports what validation could not catch (a value that the
// type's own UnmarshalJSON refused, for example) as invalid_args.
func decodeError(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return Errorf(CodeInvalidArgs, "field %q: cannot use %s as %s", te.Field, te.Value, te.Type)
	}
	return Errorf(CodeInvalidArgs, "decode arguments: %v", err)
}

type skill struct {
	tools  map[string]*Tool
	infos  []ToolInfo
	sorted string // tool names for unknown_tool messages
}

var _ Skill = (*skill)(nil)

// NewSkill serves the given tools. Invoke validates the arguments against
// the tool's schema before calling it and maps failures to *Error:
// invalid_args (naming the failing field), unknown_tool, and tool_failed for
// a handler error that is not already an *Error. A handler that returns the
// context's error gets timeout or canceled.
//
// NewSkill panics on duplicate tool names.
func NewSkill(tools ...Tool) Skill {
	s := &skill{tools: make(map[string]*Tool, len(tools))}
	names := make([]string, 0, len(tools))
	for i := range tools {
		t := &tools[i]
		if t.call == nil {
			panic("sdk.NewSkill: zero Tool; build tools with NewTool")
		}
		if _, dup := s.tools[t.info.Name]; dup {
			panic(fmt.Sprintf("sdk.NewSkill: duplicate tool %q", t.info.Name))
		}
		s.tools[t.info.Name] = t
		s.infos = append(s.infos, t.info)
		names = append(names, t.info.Name)
	}
	sort.Strings(names)
	s.sorted = strings.Join(names, ", ")
	return s
}

func (s *skill) Describe(context.Context) ([]ToolInfo, error) {
	return slices.Clone(s.infos), nil
}

func (s *skill) Invoke(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	t, ok := s.tools[name]
	if !ok {
		return Result{}, Errorf(CodeUnknownTool, "unknown tool %q; this skill has: %s", name, s.sorted)
	}
	if e := t.in.validateArgs(args); e != nil {
		e.Message = name + ": " + e.Message
		return Result{}, e
	}
	box := &note{}
	v, err := t.call(context.WithValue(ctx, noteKey{}, box), args)
	if err != nil {
		return Result{}, toolError(ctx, name, err)
	}
	box.mu.Lock()
	msg := box.msg
	box.mu.Unlock()
	return Result{Value: v, Message: msg}, nil
}

func toolError(ctx context.Context, name string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		if errors.Is(err, context.DeadlineExceeded) {
			return Errorf(CodeTimeout, "%s: %v", name, err)
		}
		return Errorf(CodeCanceled, "%s: %v", name, err)
	}
	return Errorf(CodeToolFailed, "%s: %v", name, err)
}

type noteKey struct{}

// note is filled by Note; handlers may call Note from their own goroutines.
type note struct {
	mu  sync.Mutex
	msg string
}

// Note attaches msg to the successful Result of the tool call that ctx
// belongs to (for example "output truncated to 1 MiB"). Several notes are
// joined by "; ". Outside a tool call it does nothing.
func Note(ctx context.Context, msg string) {
	n, ok := ctx.Value(noteKey{}).(*note)
	if !ok || msg == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.msg != "" {
		n.msg += "; "
	}
	n.msg += msg
}
