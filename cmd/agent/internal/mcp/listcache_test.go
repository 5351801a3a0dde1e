//go:build unix

package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
)

// TestToolsListCached: the prepared answer is exactly go-sdk's: a list
// with _meta, which bypasses the cache, gives the same result.
func TestToolsListCached(t *testing.T) {
	t.Parallel()
	srv, err := mcp.New(context.Background(), mcp.Options{Load: syntheticWorkspace(t, 5, 3), IdleTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTransport(ctx, mcp.LineTransport(inR, outW)) }()
	t.Cleanup(func() { inW.Close(); cancel(); outR.Close(); <-done })
	out := bufio.NewReader(outR)
	roundTrip := func(line string) map[string]json.RawMessage {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if line == `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
			return nil
		}
		b, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	roundTrip(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	sdk := roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"trace":"x"}}}`)["result"]
	first := roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)["result"]
	cached := roundTrip(`{"jsonrpc":"2.0","id":"3","method":"tools/list","params":{}}`)["result"]
	if len(sdk) == 0 || string(first) != string(sdk) || string(cached) != string(sdk) {
		t.Errorf("tools/list answers differ:\ngo-sdk %.300s\nfirst  %.300s\ncached %.300s", sdk, first, cached)
	}
	var res struct{ Tools []json.RawMessage }
	if err := json.Unmarshal(cached, &res); err != nil || len(res.Tools) < 15 {
		t.Errorf("cached list has %d tools (%v), want the 15 skill tools and use_skill", len(res.Tools), err)
	}
}
