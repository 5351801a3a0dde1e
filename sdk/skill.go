package sdk

import (
	"context"
	"encoding/json"
	"fmt"
)

// ToolInfo describes one tool: what the host caches in the registry and what
// a model sees. InputSchema is a JSON Schema object.
type ToolInfo struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Title is a display name for people; "" shows Name.
	Title string `json:"title,omitempty"`
	// Annotations are hints on how the tool behaves; nil gives none.
	Annotations *Annotations `json:"annotations,omitempty"`
	// OutputSchema is the JSON Schema of the result object, set by NewTool
	// when the result type is a struct.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Result is a successful tool answer: a JSON value plus an optional note for
// the caller (for example a truncation warning).
type Result struct {
	Value   json.RawMessage
	Message string
}

// Skill is the contract that crosses the process boundary. Plugin authors
// rarely implement it by hand: NewSkill builds one from typed tools.
type Skill interface {
	Describe(ctx context.Context) ([]ToolInfo, error)
	Invoke(ctx context.Context, tool string, args json.RawMessage) (Result, error)
}

// Error codes shared by plugins and the host.
const (
	CodeInvalidArgs   = "invalid_args"
	CodeUnknownTool   = "unknown_tool"
	CodeToolFailed    = "tool_failed"
	CodePluginCrashed = "plugin_crashed"
	CodeTimeout       = "timeout"
	CodeCanceled      = "canceled"
)

// Error is a structured tool failure. It survives the trip across the
// process boundary with its Code intact.
type Error struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, a...)}
}
