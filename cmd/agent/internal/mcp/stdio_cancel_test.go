package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestLineConnDropsCancelled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   []string
		answer  []any // ids answered, in order
		written []string
	}{
		{
			name: "cancelled call",
			input: []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`,
				`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			},
			answer:  []any{float64(1), float64(2)},
			written: []string{`"id":2`},
		},
		{
			name: "string id",
			input: []string{
				`{"jsonrpc":"2.0","id":"a","method":"tools/call"}`,
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`,
			},
			answer: []any{"a"},
		},
		{
			name: "cancel after the answer does not drop a reused id",
			input: []string{
				`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
			},
			answer:  []any{float64(7)},
			written: []string{`"id":7`},
		},
		{
			name: "cancel of another id",
			input: []string{
				`{"jsonrpc":"2.0","id":3,"method":"tools/call"}`,
				`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`,
			},
			answer:  []any{float64(3)},
			written: []string{`"id":3`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, out := connOver(t, strings.Join(tt.input, "\n")+"\n")
			ctx := context.Background()
			for range tt.input {
				if _, err := c.Read(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for _, id := range tt.answer {
				if err := c.Write(ctx, &jsonrpc.Response{ID: mustID(t, id), Result: []byte(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if out.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.written) {
				t.Fatalf("wrote %q, want %d answers %q", out.String(), len(tt.written), tt.written)
			}
			for i, w := range tt.written {
				if !strings.Contains(lines[i], w) {
					t.Errorf("answer %d = %s, want %s", i, lines[i], w)
				}
			}
		})
	}
}
