package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

type anthropicRequest struct {
	Model    string                  `json:"model"`
	Stream   bool                    `json:"stream"`
	System   json.RawMessage         `json:"system"`
	Tools    []struct{ Name string } `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []anthropicBlock
	_ = json.Unmarshal(raw, &blocks)
	out := ""
	for _, b := range blocks {
		out += b.Text
	}
	return out
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var in anthropicRequest
	if !readJSON(w, r, &in) {
		return
	}
	req := Request{API: "anthropic", Model: in.Model, Stream: in.Stream, System: textOf(in.System)}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Name)
	}
	for _, m := range in.Messages {
		msg := Msg{Role: m.Role}
		var str string
		if json.Unmarshal(m.Content, &str) == nil {
			msg.Text = str
		} else {
			var blocks []anthropicBlock
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				switch b.Type {
				case "text":
					msg.Text += b.Text
				case "tool_use":
					msg.ToolCalls = append(msg.ToolCalls, Call{Name: b.Name, Args: string(b.Input)})
				case "tool_result":
					msg.ToolResults = append(msg.ToolResults, Result{ID: b.ToolUseID, Content: textOf(b.Content), IsError: b.IsError})
				}
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	reply, seq := s.next(req)
	if reply.Error != "" {
		httpError(w, "anthropic", reply.Error)
		return
	}
	id := fmt.Sprintf("msg_%d", seq)
	stop := "end_turn"
	if len(reply.ToolCalls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": 10 * len(in.Messages), "output_tokens": 5}
	if !in.Stream {
		var content []map[string]any
		if reply.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": reply.Text})
		}
		for i, c := range reply.ToolCalls {
			input := json.RawMessage(c.Args)
			if !json.Valid(input) {
				input = json.RawMessage(`{}`)
			}
			content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", seq, i), "name": c.Name, "input": input})
		}
		if content == nil {
			content = []map[string]any{}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": in.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	ev := newSSE(w)
	ev.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": in.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": usage["input_tokens"], "output_tokens": 1},
	}})
	idx := 0
	if reply.Text != "" {
		ev.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, c := range chunks(reply.Text) {
			ev.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": c}})
		}
		ev.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for i, c := range reply.ToolCalls {
		ev.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{
			"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", seq, i), "name": c.Name, "input": map[string]any{}}})
		args := c.Args
		half := len(args) / 2
		for _, part := range []string{args[:half], args[half:]} {
			if part != "" {
				ev.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
			}
		}
		ev.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	ev.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": usage["output_tokens"]}})
	ev.send("message_stop", map[string]any{"type": "message_stop"})
}
