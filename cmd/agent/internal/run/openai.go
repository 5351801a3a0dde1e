package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

type openAIModel struct {
	name   string
	client openai.Client
	o      ClientOptions
}

var _ Model = (*openAIModel)(nil)

// localKey is sent to an OpenAI-compatible server reached through
// OPENAI_BASE_URL without a key: Ollama, vLLM and llama.cpp ignore it.
const localKey = "none"

func newOpenAI(name string, o ClientOptions) (*openAIModel, error) {
	key := env(o, "OPENAI_API_KEY")
	base := env(o, "OPENAI_BASE_URL")
	if key == "" && base == "" {
		return nil, fmt.Errorf("openai/%s: %w: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local OpenAI-compatible server", name, ErrMissingKey)
	}
	if key == "" {
		key = localKey
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithMaxRetries(o.MaxRetries)}
	if base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	return &openAIModel{name: name, client: openai.NewClient(opts...), o: o}, nil
}

func (m *openAIModel) Name() string { return "openai/" + m.name }

func (m *openAIModel) Turn(ctx context.Context, req Request, onText func(string)) (Reply, error) {
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(m.name),
		Messages: openAIMessages(req),
	}
	for _, t := range req.Tools {
		var schema map[string]any
		_ = json.Unmarshal(t.InputSchema, &schema)
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	var cc openai.ChatCompletion
	if m.o.Stream {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			acc.AddChunk(chunk)
			if onText != nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
				onText(chunk.Choices[0].Delta.Content)
			}
		}
		if err := stream.Err(); err != nil {
			return Reply{}, m.fail(ctx, err)
		}
		stream.Close()
		cc = acc.ChatCompletion
	} else {
		got, err := m.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return Reply{}, m.fail(ctx, err)
		}
		cc = *got
		if onText != nil && len(cc.Choices) > 0 && cc.Choices[0].Message.Content != "" {
			onText(cc.Choices[0].Message.Content)
		}
	}
	if len(cc.Choices) == 0 {
		return Reply{}, fmt.Errorf("%s: %w: %v", m.Name(), ErrProvider, errEmptyReply)
	}
	ch := cc.Choices[0]
	r := Reply{Text: ch.Message.Content, StopReason: ch.FinishReason, Usage: Usage{InputTokens: cc.Usage.PromptTokens, OutputTokens: cc.Usage.CompletionTokens}}
	for _, c := range ch.Message.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
	}
	return r, nil
}

func (m *openAIModel) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return classify(m.Name(), apiErr.StatusCode, errorMessage(apiErr.RawJSON()), err)
	}
	return classify(m.Name(), 0, "", err)
}

func openAIMessages(req Request) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" {
				a.Content.OfString = openai.String(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Args},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		default:
			for _, r := range msg.ToolResults {
				out = append(out, openai.ToolMessage(r.Content, r.ID))
			}
			if msg.Text != "" {
				out = append(out, openai.UserMessage(msg.Text))
			}
		}
	}
	return out
}
