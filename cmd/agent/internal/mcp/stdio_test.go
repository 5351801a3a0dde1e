package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sdkEncoding is how go-sdk itself decodes and re-encodes line: the
// reference lineConn must match.
func sdkEncoding(t testing.TB, line string) string {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(line))
	if err != nil {
		t.Fatalf("go-sdk cannot decode %s: %v", line, err)
	}
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func encoded(t testing.TB, m jsonrpc.Message) string {
	t.Helper()
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// connOver connects a lineTransport reading input; out receives what it
// writes.
func connOver(t *testing.T, input string) (*lineConn, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	c, err := (&lineTransport{r: io.NopCloser(strings.NewReader(input)), w: &out}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*lineConn), &out
}

func TestLineConnRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		lines []string // one message each
		sep   string
	}{
		{"call", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`}, "\n"},
		{"string id", []string{`{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}`}, "\n"},
		{"no newline at the end", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`}, ""},
		{"notification", []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`}, "\n"},
		{"empty method", []string{`{"jsonrpc":"2.0","id":2,"method":""}`}, "\n"},
		{"response", []string{`{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}`}, "\n"},
		{"error response", []string{`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no such method"}}`}, "\n"},
		{"several, CRLF", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, "\r\n"},
		{"blank lines between", []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, "\n\n  \n"},
		{"longer than the read buffer", []string{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 200<<10) + `"}}}`}, "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := connOver(t, strings.Join(tt.lines, tt.sep)+tt.sep)
			for _, line := range tt.lines {
				m, err := c.Read(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got, want := encoded(t, m), sdkEncoding(t, line); got != want {
					t.Errorf("decoded as %.200s, go-sdk decodes %.200s", got, want)
				}
			}
			if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
				t.Errorf("after the last line: %v, want EOF", err)
			}
		})
	}
}

func TestLineConnReadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
	}{
		{"not JSON", `{"jsonrpc":"2.0",`},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`},
		{"no version", `{"id":1,"method":"ping"}`},
		{"keys match exactly", `{"JSONRPC":"2.0","id":1,"method":"ping"}`},
		{"neither method nor id", `{"jsonrpc":"2.0","result":{}}`},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`},
		{"empty batch", `[]`},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// go-sdk's DecodeMessage takes the first value of a line and
			// its ioConn then refuses trailing data; batches are ioConn's.
			if _, err := jsonrpc.DecodeMessage([]byte(tt.line)); err == nil && tt.name != "empty batch" && tt.name != "trailing data" {
				t.Fatalf("go-sdk accepts %s; the case is wrong", tt.line)
			}
			c, _ := connOver(t, tt.line+"\n")
			if m, err := c.Read(context.Background()); err == nil {
				t.Errorf("read %s as %v, want an error", tt.line, m)
			}
		})
	}
}

func TestLineConnWrite(t *testing.T) {
	t.Parallel()
	result := json.RawMessage(`{"content":[{"type":"text","text":"hi"}],"structuredContent":{"text":"hi"}}`)
	tests := []struct {
		name string
		msg  jsonrpc.Message
	}{
		{"result", &jsonrpc.Response{ID: mustID(t, float64(7)), Result: result}},
		{"string id", &jsonrpc.Response{ID: mustID(t, "x\"<y>"), Result: result}},
		{"wire error", &jsonrpc.Response{ID: mustID(t, float64(1)), Error: &jsonrpc.Error{Code: -32602, Message: "bad <params>", Data: json.RawMessage(`{"a":1}`)}}},
		{"plain error", &jsonrpc.Response{ID: mustID(t, float64(1)), Error: errors.New("broke")}},
		{"wrapped wire error", &jsonrpc.Response{ID: mustID(t, float64(1)), Error: fmt.Errorf("call: %w", &jsonrpc.Error{Code: -32601, Message: "gone"})}},
		{"notification", &jsonrpc.Request{Method: "notifications/tools/list_changed", Params: json.RawMessage(`{}`)}},
		{"call", &jsonrpc.Request{ID: mustID(t, float64(9)), Method: "roots/list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, out := connOver(t, "")
			if err := c.Write(context.Background(), tt.msg); err != nil {
				t.Fatal(err)
			}
			if got, want := out.String(), encoded(t, tt.msg)+"\n"; got != want {
				t.Errorf("wrote %s, go-sdk writes %s", got, want)
			}
		})
	}
}

// TestLineConnBatch: the responses to a batch go out together, in the
// batch's order, once the last one is written.
func TestLineConnBatch(t *testing.T) {
	t.Parallel()
	c, out := connOver(t, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`+"\n")
	var calls []*jsonrpc.Request
	for range 3 {
		m, err := c.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r := m.(*jsonrpc.Request); r.IsCall() {
			calls = append(calls, r)
		}
	}
	if len(calls) != 2 {
		t.Fatalf("read %d calls, want 2", len(calls))
	}
	write := func(r *jsonrpc.Request) {
		if err := c.Write(context.Background(), &jsonrpc.Response{ID: r.ID, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	write(calls[1])
	if out.Len() != 0 {
		t.Fatalf("wrote %s before the batch was complete", out)
	}
	write(calls[0])
	if got, want := out.String(), `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]`+"\n"; got != want {
		t.Errorf("wrote %s, want %s", got, want)
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	t.Helper()
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// FuzzDecodeMessage: whatever both decoders accept decodes to the same
// message as go-sdk's.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":"x","result":{"a":[1,2]}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","method":"n","params":null}`,
		`{"jsonrpc":"2.0","id":1.5,"method":""}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ours, err := decodeMessage(data)
		theirs, sdkErr := jsonrpc.DecodeMessage(data)
		if err != nil || sdkErr != nil {
			return
		}
		if got, want := encoded(t, ours), encoded(t, theirs); got != want {
			t.Errorf("%q decodes to %s, go-sdk: %s", data, got, want)
		}
	})
}

// TestInlineHandsOverReading: a call the reading goroutine runs itself
// (setInline) does not stop the reading for long. While a claimed call
// still runs, the next message is read and returned by Read, whether it
// came in the same write as the call (buffered) or later (after
// inlineFor); the call's answer is written when it ends.
func TestInlineHandsOverReading(t *testing.T) {
	t.Parallel()
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`
	const next = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, tc := range []struct {
		name     string
		together bool // both lines in one write
	}{{"buffered", true}, {"after inlineFor", false}} {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			var out bytes.Buffer // written only after release, read after answered
			conn, err := (&lineTransport{r: pr, w: &out}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			c := conn.(*lineConn)
			t.Cleanup(func() { pw.Close(); c.Close() })
			release, ran, answered := make(chan struct{}), make(chan struct{}), make(chan struct{})
			c.setInline(func(m jsonrpc.Message) (func(), bool) {
				req, ok := m.(*jsonrpc.Request)
				if !ok || req.Method != "tools/call" {
					return nil, false
				}
				return func() {
					close(ran)
					<-release
					_ = c.Write(context.Background(), &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)})
					close(answered)
				}, true
			})
			got := make(chan jsonrpc.Message, 1)
			go func() {
				m, err := c.Read(context.Background())
				if err != nil {
					t.Error(err)
				}
				got <- m
			}()
			go func() {
				if tc.together {
					_, _ = io.WriteString(pw, call+"\n"+next+"\n")
					return
				}
				_, _ = io.WriteString(pw, call+"\n")
				<-ran
				_, _ = io.WriteString(pw, next+"\n")
			}()
			var m jsonrpc.Message
			select {
			case m = <-got: // while the call still runs
			case <-time.After(10 * time.Second):
				t.Fatal("nothing was read while the claimed call ran")
			}
			if req, ok := m.(*jsonrpc.Request); !ok || req.Method != "tools/list" {
				t.Fatalf("Read returned %s, want the tools/list after the claimed call", encoded(t, m))
			}
			if out.String() != "" {
				t.Fatalf("answered before the call ended: %s", out.String())
			}
			close(release)
			<-answered
			pw.Close()
			if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
				t.Fatalf("Read after the input ended: %v, want EOF", err)
			}
			if want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"; out.String() != want {
				t.Errorf("wrote %q, want %q", out.String(), want)
			}
		})
	}
}
