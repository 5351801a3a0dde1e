package run_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentskills/agent/cmd/agent/internal/run"
	"github.com/agentskills/agent/internal/testutil/fakemodel"
)

// startModel serves script on loopback and returns a client of the real
// SDK for provider ("anthropic" or "openai") pointed at it.
func startModel(t *testing.T, provider string, stream bool, script ...fakemodel.Reply) (*fakemodel.Server, run.Model) {
	t.Helper()
	srv, err := fakemodel.Start(script...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m, err := run.NewModel(provider+"/test-model", clientOptions(srv, stream))
	if err != nil {
		t.Fatal(err)
	}
	return srv, m
}

func clientOptions(srv *fakemodel.Server, stream bool) run.ClientOptions {
	env := map[string]string{
		"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.AnthropicURL(),
		"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.OpenAIURL(),
	}
	return run.ClientOptions{
		LookupEnv:  func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Stream:     stream,
		MaxRetries: 2,
	}
}

var wires = []struct {
	name, provider string
	stream         bool
}{
	{"anthropic", "anthropic", false},
	{"anthropic-stream", "anthropic", true},
	{"openai", "openai", false},
	{"openai-stream", "openai", true},
}

func TestModelWire(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			srv, m := startModel(t, w.provider, w.stream,
				fakemodel.Reply{Text: "let me look", ToolCalls: []fakemodel.Call{{Name: "greet", Args: `{"name":"Ada"}`}, {Name: "list_dir", Args: `{}`}}},
			)
			var streamed strings.Builder
			req := run.Request{
				System:   "be brief",
				Messages: []run.Message{{Role: run.RoleUser, Text: "hi"}},
				Tools:    []run.ToolSpec{{Name: "greet", Description: "greets", InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}},
			}
			r, err := m.Turn(context.Background(), req, func(s string) { streamed.WriteString(s) })
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "let me look" || streamed.String() != "let me look" {
				t.Fatalf("text = %q, streamed %q", r.Text, streamed.String())
			}
			if len(r.ToolCalls) != 2 || r.ToolCalls[0].Name != "greet" || r.ToolCalls[0].Args != `{"name":"Ada"}` || r.ToolCalls[0].ID == "" {
				t.Fatalf("tool calls = %+v", r.ToolCalls)
			}
			got := srv.Requests()[0]
			if got.System != "be brief" || got.Stream != w.stream || len(got.Tools) != 1 || got.Model != "test-model" {
				t.Fatalf("request = %+v", got)
			}
			// The history goes back with the tool results.
			req.Messages = append(req.Messages,
				run.Message{Role: run.RoleAssistant, Text: r.Text, ToolCalls: r.ToolCalls},
				run.Message{Role: run.RoleUser, ToolResults: []run.ToolResult{
					{ID: r.ToolCalls[0].ID, Name: "greet", Content: `"hello Ada"`},
					{ID: r.ToolCalls[1].ID, Name: "list_dir", Content: `{"error":"x"}`, IsError: true},
				}})
			if _, err := m.Turn(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			res := srv.Requests()[1].LastResults()
			if len(res) != 2 || res[0].Content != `"hello Ada"` || res[0].ID != r.ToolCalls[0].ID {
				t.Fatalf("results sent back = %+v", res)
			}
		})
	}
}

func TestModelErrors(t *testing.T) {
	t.Parallel()
	for _, w := range wires {
		for _, tc := range []struct {
			name  string
			reply fakemodel.Reply
			want  error
		}{
			{"429 after retries", fakemodel.Reply{Error: "rate_limit", Times: 3}, run.ErrRateLimited},
			{"5xx after retries", fakemodel.Reply{Error: "overloaded", Times: 3}, run.ErrProviderDown},
			{"unknown model", fakemodel.Reply{Error: "not_found"}, run.ErrUnknownModel},
			{"context window", fakemodel.Reply{Error: "context"}, run.ErrContextWindow},
		} {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				srv, m := startModel(t, w.provider, w.stream, tc.reply)
				_, err := m.Turn(context.Background(), run.Request{Messages: []run.Message{{Role: run.RoleUser, Text: "hi"}}}, nil)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if srv.Remaining() != 0 {
					t.Fatalf("%d scripted replies left: the client did not retry as expected", srv.Remaining())
				}
			})
		}
		t.Run(w.name+"/retry then succeed", func(t *testing.T) {
			t.Parallel()
			_, m := startModel(t, w.provider, w.stream, fakemodel.Reply{Error: "rate_limit"}, fakemodel.Reply{Error: "server"}, fakemodel.Reply{Text: "ok"})
			r, err := m.Turn(context.Background(), run.Request{Messages: []run.Message{{Role: run.RoleUser, Text: "hi"}}}, nil)
			if err != nil || r.Text != "ok" {
				t.Fatalf("reply %+v, err %v", r, err)
			}
		})
	}
}

func TestNewModel(t *testing.T) {
	t.Parallel()
	none := run.ClientOptions{LookupEnv: func(string) (string, bool) { return "", false }}
	for _, tc := range []struct {
		name, spec string
		want       error
	}{
		{"empty", "", run.ErrNoModel},
		{"no provider", "claude", run.ErrUnknownProvider},
		{"unknown provider", "acme/x", run.ErrUnknownProvider},
		{"anthropic without key", "anthropic/claude-x", run.ErrMissingKey},
		{"openai without key or base URL", "openai/gpt-x", run.ErrMissingKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := run.NewModel(tc.spec, none); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}
