package run

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ClientOptions configure a model client.
type ClientOptions struct {
	// LookupEnv reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY
	// and OPENAI_BASE_URL.
	LookupEnv func(string) (string, bool)
	// Stream asks for server-sent events, so text is shown as it comes.
	Stream bool
	// MaxRetries is how often a 429 or 5xx answer is retried, with
	// exponential backoff (the SDKs' own, which honour Retry-After).
	MaxRetries int
	// MaxTokens bounds one reply (Anthropic needs it).
	MaxTokens int64
	// HTTPClient replaces the SDKs' default client (tests, benchmarks).
	HTTPClient *http.Client
}

// DefaultMaxRetries is the retry count of a 429 or 5xx answer.
const DefaultMaxRetries = 4

// NewModel returns the client for PROVIDER/MODEL.
func NewModel(spec string, o ClientOptions) (Model, error) {
	if spec == "" {
		return nil, ErrNoModel
	}
	provider, name, ok := strings.Cut(spec, "/")
	if !ok || name == "" {
		return nil, fmt.Errorf("%w: %q is not PROVIDER/MODEL (anthropic/... or openai/...)", ErrUnknownProvider, spec)
	}
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = 8192
	}
	if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	switch provider {
	case "anthropic":
		return newAnthropic(name, o)
	case "openai":
		return newOpenAI(name, o)
	}
	return nil, fmt.Errorf("%w: %q in %q (use anthropic/MODEL or openai/MODEL; openai also reaches local servers through OPENAI_BASE_URL)", ErrUnknownProvider, provider, spec)
}

func env(o ClientOptions, key string) string {
	v, _ := o.LookupEnv(key)
	return strings.TrimSpace(v)
}

// classify turns a provider's HTTP failure into one of the package's
// sentinel errors, keeping the provider's own words.
func classify(model string, status int, msg string, err error) error {
	lower := strings.ToLower(msg)
	switch {
	case status == http.StatusTooManyRequests:
		return fmt.Errorf("%s: %w after retries (HTTP 429): %s: %v", model, ErrRateLimited, msg, err)
	case status >= 500:
		return fmt.Errorf("%s: %w after retries (HTTP %d): %s: %v", model, ErrProviderDown, status, msg, err)
	case status == http.StatusNotFound && (strings.Contains(lower, "model") || msg == ""):
		return fmt.Errorf("%s: %w: %s", model, ErrUnknownModel, msg)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%s: %w: the key was refused (HTTP %d): %s", model, ErrMissingKey, status, msg)
	case strings.Contains(lower, "prompt is too long"), strings.Contains(lower, "context_length_exceeded"),
		strings.Contains(lower, "maximum context length"), strings.Contains(lower, "context window"):
		return fmt.Errorf("%s: %w: %s", model, ErrContextWindow, msg)
	}
	if status == 0 {
		return fmt.Errorf("%s: %w: %v", model, ErrProvider, err)
	}
	return fmt.Errorf("%s: %w (HTTP %d): %s", model, ErrProvider, status, msg)
}

// errorMessage digs the human message out of a provider's error body:
// {"error": {"message": ...}} for both Anthropic and OpenAI.
func errorMessage(raw string) string {
	type body struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
		Message string `json:"message"`
	}
	var b body
	if err := jsonUnmarshalString(raw, &b); err == nil {
		parts := []string{}
		if b.Error.Type != "" {
			parts = append(parts, b.Error.Type)
		}
		if c, ok := b.Error.Code.(string); ok && c != "" {
			parts = append(parts, c)
		}
		m := b.Error.Message
		if m == "" {
			m = b.Message
		}
		if m != "" {
			parts = append(parts, m)
		}
		if len(parts) > 0 {
			return strings.Join(parts, ": ")
		}
	}
	return strings.TrimSpace(raw)
}

var errEmptyReply = errors.New("the model returned no choice")
