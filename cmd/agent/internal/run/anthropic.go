package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

type anthropicModel struct {
	name   string
	client anthropic.Client
	o      ClientOptions
}

var _ Model = (*anthropicModel)(nil)

func newAnthropic(name string, o ClientOptions) (*anthropicModel, error) {
	key := env(o, "ANTHROPIC_API_KEY")
	if key == "" {
		return nil, fmt.Errorf("anthropic/%s: %w: set ANTHROPIC_API_KEY", name, ErrMissingKey)
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(o.MaxRetries)}
	if u := env(o, "ANTHROPIC_BASE_URL"); u != "" {
		opts = append(opts, option.WithBaseURL(u))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &anthropicModel{name: name, client: anthropic.NewClient(opts...), o: o}, nil
}

func (m *anthropicModel) Name() string { return "anthropic/" + m.name }

func (m *anthropicModel) Turn(ctx context.Context, req Request, onText func(string)) (Reply, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(m.name),
		MaxTokens: m.o.MaxTokens,
		Messages:  anthropicMessages(req.Messages),
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        t.Name,
			Description: anthropic.String(t.Description),
			InputSchema: anthropicSchema(t.InputSchema),
		}})
	}
	var msg anthropic.Message
	if m.o.Stream {
		stream := m.client.Messages.NewStreaming(ctx, params)
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				stream.Close()
				return Reply{}, fmt.Errorf("%s: %w: read the stream: %v", m.Name(), ErrProvider, err)
			}
			if d, ok := ev.AsAny().(anthropic.ContentBlockDeltaEvent); ok && onText != nil {
				if td, ok := d.Delta.AsAny().(anthropic.TextDelta); ok {
					onText(td.Text)
				}
			}
		}
		if err := stream.Err(); err != nil {
			return Reply{}, m.fail(ctx, err)
		}
		stream.Close()
	} else {
		got, err := m.client.Messages.New(ctx, params)
		if err != nil {
			return Reply{}, m.fail(ctx, err)
		}
		msg = *got
		if onText != nil {
			for _, b := range msg.Content {
				if tb, ok := b.AsAny().(anthropic.TextBlock); ok {
					onText(tb.Text)
				}
			}
		}
	}
	r := Reply{StopReason: string(msg.StopReason), Usage: Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens}}
	for _, b := range msg.Content {
		switch v := b.AsAny().(type) {
		case anthropic.TextBlock:
			r.Text += v.Text
		case anthropic.ToolUseBlock:
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: v.ID, Name: v.Name, Args: string(v.Input)})
		}
	}
	return r, nil
}

func (m *anthropicModel) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		return classify(m.Name(), apiErr.StatusCode, errorMessage(apiErr.RawJSON()), err)
	}
	return classify(m.Name(), 0, "", err)
}

func anthropicMessages(msgs []Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, msg := range msgs {
		var blocks []anthropic.ContentBlockParamUnion
		switch msg.Role {
		case RoleAssistant:
			if msg.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, objectArgs(c.Args), c.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock("(no reply)"))
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		default:
			for _, r := range msg.ToolResults {
				blocks = append(blocks, anthropic.NewToolResultBlock(r.ID, r.Content, r.IsError))
			}
			if msg.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			}
			out = append(out, anthropic.NewUserMessage(blocks...))
		}
	}
	return out
}

// objectArgs is the tool input to send back in the history: the model's
// own arguments when they are a JSON object, else the raw text wrapped in
// one, since the API accepts only objects there.
func objectArgs(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err == nil && obj != nil {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(map[string]string{"malformed_arguments": args})
	return b
}

func anthropicSchema(raw json.RawMessage) anthropic.ToolInputSchemaParam {
	var s map[string]any
	_ = json.Unmarshal(raw, &s)
	p := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range s {
		switch k {
		case "type":
		case "properties":
			p.Properties = v
		case "required":
			if list, ok := v.([]any); ok {
				for _, x := range list {
					if str, ok := x.(string); ok {
						p.Required = append(p.Required, str)
					}
				}
			}
		default:
			p.ExtraFields[k] = v
		}
	}
	return p
}
