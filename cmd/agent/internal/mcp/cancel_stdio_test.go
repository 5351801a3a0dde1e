//go:build unix

package mcp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCancelledGetsNoResponse reads agent mcp's raw stdout: a call the
// client cancels gets no response at all (MCP: "Receivers of a
// cancellation notification SHOULD NOT send a response"), and the server
// answers the next request.
func TestCancelledGetsNoResponse(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	stdin, stdout := startRaw(t, home)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	type message struct {
		ID     any             `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	lines := make(chan message, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	// await returns the response to id, failing on a response to a
	// cancelled id seen before it.
	await := func(id float64, cancelled ...float64) message {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("stdout closed before the response to %v", id)
				}
				for _, c := range cancelled {
					if m.ID == c && m.Method == "" {
						t.Fatalf("the cancelled call %v got a response: result %s error %s", c, m.Result, m.Error)
					}
				}
				if m.ID == id && m.Method == "" {
					return m
				}
			case <-timeout:
				t.Fatalf("no response to %v", id)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	await(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	mark := filepath.Join(t.TempDir(), "mark")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"millis":60000,"mark":%q}}}`, mark))
	// The call is running once the plugin is up; cancel it then.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"warm"}}}`)
	await(3, 2)
	time.Sleep(300 * time.Millisecond)
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`)
	if !eventually(20*time.Second, func() bool {
		b, _ := os.ReadFile(mark)
		return string(b) == "canceled"
	}) {
		t.Fatal("the plugin call was not canceled")
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}`)
	if m := await(4, 2); m.Error != nil || len(m.Result) == 0 {
		t.Fatalf("the request after the cancel: %s %s", m.Result, m.Error)
	}
	// Closing stdin makes the server write every pending answer and exit:
	// still nothing for the cancelled call.
	_ = stdin.Close()
	for m := range lines {
		if m.ID == float64(2) && m.Method == "" {
			t.Fatalf("the cancelled call got a response at exit: result %s error %s", m.Result, m.Error)
		}
	}
}
