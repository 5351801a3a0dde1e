// Package fakemodel is a scripted model server on loopback for tests, the
// benchmark and the demo of `agent run`. It speaks the real wire formats,
// Anthropic Messages (POST /v1/messages) and OpenAI Chat Completions (POST
// /v1/chat/completions, or /chat/completions), streaming (SSE) and not, so
// that the official SDK clients reach it through their base URL. It is not
// part of the agent binary.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// Reply is one scripted answer of the model.
type Reply struct {
	Text      string `json:"text,omitempty"`
	ToolCalls []Call `json:"tool_calls,omitempty"`
	// Error, when set, answers with an HTTP failure instead: "rate_limit"
	// (429), "overloaded" (529 for Anthropic, 503 for OpenAI), "server"
	// (500), "not_found" (404, unknown model) or "context" (400, the
	// prompt is over the context window).
	Error string `json:"error,omitempty"`
	// Times repeats this reply; 0 means once.
	Times int `json:"times,omitempty"`
}

// Call is one scripted tool call. Args is sent as is, so a test can send
// malformed JSON (OpenAI carries arguments as a string; Anthropic needs an
// object, so a malformed Args is sent there as a bad partial_json stream).
type Call struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

// Msg is one message of a recorded request, in a provider-neutral shape.
type Msg struct {
	Role        string   `json:"role"`
	Text        string   `json:"text,omitempty"`
	ToolCalls   []Call   `json:"tool_calls,omitempty"`
	ToolResults []Result `json:"tool_results,omitempty"`
}

// Result is one tool result the client sent back.
type Result struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
}

// Request is what the server received.
type Request struct {
	API      string   `json:"api"` // "anthropic" or "openai"
	Model    string   `json:"model"`
	Stream   bool     `json:"stream"`
	System   string   `json:"system"`
	Tools    []string `json:"tools"`
	Messages []Msg    `json:"messages"`
}

// LastResults are the tool results of the request's last message.
func (r Request) LastResults() []Result {
	if len(r.Messages) == 0 {
		return nil
	}
	return r.Messages[len(r.Messages)-1].ToolResults
}

// Server serves a script: each request takes the next Reply. When the
// script runs out, Func answers (if set), else the server answers with
// the text "(script ended)".
type Server struct {
	URL string // http://127.0.0.1:PORT

	// Func, when set, answers every request past the script.
	Func func(Request) Reply

	mu       sync.Mutex
	script   []Reply
	requests []Request
	seq      int
	srv      *http.Server
	ln       net.Listener
}

// Start serves script on a loopback port until Close.
func Start(script ...Reply) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln}
	s.Push(script...)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthropic)
	mux.HandleFunc("POST /v1/chat/completions", s.openai)
	mux.HandleFunc("POST /chat/completions", s.openai)
	s.srv = &http.Server{Handler: mux}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// AnthropicURL and OpenAIURL are the base URLs each SDK expects.
func (s *Server) AnthropicURL() string { return s.URL }

// OpenAIURL is the OpenAI base URL (the SDK appends /chat/completions).
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replies {
		n := max(r.Times, 1)
		r.Times = 0
		for range n {
			s.script = append(s.script, r)
		}
	}
}

// Requests returns a copy of what the server received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is how many scripted replies are left.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) next(req Request) (Reply, int) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.seq++
	seq := s.seq
	if len(s.script) > 0 {
		r := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return r, seq
	}
	f := s.Func
	s.mu.Unlock()
	if f != nil {
		return f(req), seq
	}
	return Reply{Text: "(script ended)"}, seq
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"bad JSON"}}`, http.StatusBadRequest)
		return false
	}
	return true
}

// httpError renders a scripted failure in the API's own error shape.
func httpError(w http.ResponseWriter, api, kind string) {
	status, typ, msg := 500, "api_error", "internal server error (scripted)"
	switch kind {
	case "rate_limit":
		status, typ, msg = 429, "rate_limit_error", "rate limit reached (scripted)"
	case "overloaded":
		status, typ, msg = 529, "overloaded_error", "overloaded (scripted)"
		if api == "openai" {
			status = 503
		}
	case "not_found":
		status, typ, msg = 404, "not_found_error", "model: no such model (scripted)"
	case "context":
		status, typ, msg = 400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum (scripted)"
	}
	w.Header().Set("Content-Type", "application/json")
	// The SDKs honour retry-after-ms, which keeps retried tests fast.
	w.Header().Set("retry-after-ms", "5")
	w.WriteHeader(status)
	var body any
	if api == "anthropic" {
		body = map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}
	} else {
		code := typ
		if kind == "context" {
			code = "context_length_exceeded"
			msg = "This model's maximum context length is 128000 tokens (scripted)"
		}
		if kind == "not_found" {
			code = "model_not_found"
			msg = "The model does not exist (scripted)"
		}
		body = map[string]any{"error": map[string]any{"type": typ, "code": code, "message": msg}}
	}
	_ = json.NewEncoder(w).Encode(body)
}

type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (s *sse) send(event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if s.f != nil {
		s.f.Flush()
	}
}

// chunks splits text in a few pieces, so that streaming is visible.
func chunks(s string) []string {
	if s == "" {
		return nil
	}
	words := strings.SplitAfter(s, " ")
	return words
}
