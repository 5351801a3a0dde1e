package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

type openAIRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Function struct{ Name string } `json:"function"`
	} `json:"tools"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

func (s *Server) openai(w http.ResponseWriter, r *http.Request) {
	var in openAIRequest
	if !readJSON(w, r, &in) {
		return
	}
	req := Request{API: "openai", Model: in.Model, Stream: in.Stream}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for _, m := range in.Messages {
		text := textOf(m.Content)
		switch m.Role {
		case "system", "developer":
			req.System += text
		case "tool":
			// Consecutive tool messages answer one assistant turn: keep
			// them together, as Anthropic does.
			res := Result{ID: m.ToolCallID, Content: text}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" && len(req.Messages[n-1].ToolResults) > 0 && req.Messages[n-1].Text == "" {
				req.Messages[n-1].ToolResults = append(req.Messages[n-1].ToolResults, res)
			} else {
				req.Messages = append(req.Messages, Msg{Role: "user", ToolResults: []Result{res}})
			}
		default:
			msg := Msg{Role: m.Role, Text: text}
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, Call{Name: c.Function.Name, Args: c.Function.Arguments})
			}
			req.Messages = append(req.Messages, msg)
		}
	}
	reply, seq := s.next(req)
	if reply.Error != "" {
		httpError(w, "openai", reply.Error)
		return
	}
	id := fmt.Sprintf("chatcmpl-%d", seq)
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]int{"prompt_tokens": 10 * len(in.Messages), "completion_tokens": 5, "total_tokens": 10*len(in.Messages) + 5}
	var calls []map[string]any
	for i, c := range reply.ToolCalls {
		calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d_%d", seq, i), "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": c.Args}})
	}
	if !in.Stream {
		msg := map[string]any{"role": "assistant", "content": reply.Text, "refusal": nil}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "object": "chat.completion", "created": 1, "model": in.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   usage,
		})
		return
	}
	ev := newSSE(w)
	chunk := func(delta map[string]any, finish any) {
		ev.send("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": in.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	for _, c := range chunks(reply.Text) {
		chunk(map[string]any{"content": c}, nil)
	}
	for i, c := range reply.ToolCalls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": calls[i]["id"], "type": "function",
			"function": map[string]string{"name": c.Name, "arguments": ""}}}}, nil)
		half := len(c.Args) / 2
		for _, part := range []string{c.Args[:half], c.Args[half:]} {
			if part != "" {
				chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]string{"arguments": part}}}}, nil)
			}
		}
	}
	chunk(map[string]any{}, finish)
	ev.send("", map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1, "model": in.Model, "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
	if ev.f != nil {
		ev.f.Flush()
	}
}
