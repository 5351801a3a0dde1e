package run

import (
	"context"
	"encoding/json"
	"errors"
)

// Model is one provider's chat API, reduced to what the loop needs.
type Model interface {
	// Turn sends the conversation and returns the model's reply. Text
	// arrives on onText as it streams, when the client streams.
	Turn(ctx context.Context, req Request, onText func(string)) (Reply, error)
	// Name is PROVIDER/MODEL.
	Name() string
}

// Request is one model call.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
}

// ToolSpec is a tool as a model sees it.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one entry of a run's history, provider neutral. A user
// message carries text or tool results; an assistant message carries text
// and tool calls.
type Message struct {
	Role        string       `json:"role"`
	Text        string       `json:"text,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// ToolCall is a model's request to run a tool. Args is kept as the model
// sent it, valid JSON or not: a malformed call is answered with an error
// result, never dropped.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Reply is what one model call returned.
type Reply struct {
	Text       string     `json:"text,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	StopReason string     `json:"stop_reason,omitempty"`
	Usage      Usage      `json:"usage"`
}

// Usage counts tokens as the provider reported them.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// Errors of the model clients. Each leaves the job resumable: the step that
// failed is re-run by --continue.
var (
	ErrNoModel         = errors.New("no model chosen")
	ErrUnknownProvider = errors.New("unknown model provider")
	ErrMissingKey      = errors.New("missing API key")
	ErrUnknownModel    = errors.New("unknown model")
	ErrRateLimited     = errors.New("rate limited by the model provider")
	ErrProviderDown    = errors.New("model provider unavailable")
	ErrContextWindow   = errors.New("context window exceeded")
	ErrProvider        = errors.New("model provider error")
)
