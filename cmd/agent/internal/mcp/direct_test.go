//go:build unix

package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/internal/app/workspace"
)

// TestDirectCallsAnswerAsSDK sends the same lines to two servers on the
// stdio transport, one answering tools/call itself (as `agent mcp` does)
// and one through go-sdk's dispatch, and wants the same answers: the
// direct path may only be faster, never different.
func TestDirectCallsAnswerAsSDK(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	newServer := func(viaSDK bool) *mcp.Server {
		srv, err := mcp.New(context.Background(), mcp.Options{
			Load: func(ctx context.Context) (*workspace.Workspace, error) {
				return workspace.Load(ctx, workspace.Config{Home: home, Skills: "all", AgentVersion: "0.1.0"})
			},
			IdleTimeout: -1,
			Version:     "0.1.0",
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		if viaSDK {
			srv.ViaSDK()
		}
		return srv
	}
	const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
	tests := []struct {
		name   string
		modern bool // no initialize: every request carries the 2026-07-28 _meta
		lines  []string
		direct int64 // answered by the direct path
	}{
		{
			name: "answered directly",
			lines: []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
				`{"jsonrpc":"2.0","id":"s-2","method":"tools/call","params":{"arguments":{"text":"<&>"},"name":"echo"}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail"}}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"image","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"use_skill","arguments":{"skill":"probe","arguments":"x"}}}`,
				`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"slow","arguments":{"millis":1}}}`,
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":1}}}`,
			},
			direct: 7,
		},
		{
			name: "left to go-sdk",
			lines: []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
				`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"x"}}}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":["hi"]}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"p"}}}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"task":{}}}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
				`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"Name":"echo"}}`,
				`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[]}`,
				`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"me"}}}`,
			},
		},
		{
			name:   "2026-07-28 without initialize",
			modern: true,
			lines: []string{
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"first"},` + modernMeta + `}}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"second"},` + modernMeta + `}}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail",` + modernMeta + `}}`,
			},
			direct: 2, // the first initializes go-sdk's session
		},
	}
	// The two servers run different plugin processes.
	pid := regexp.MustCompile(`(\\?"pid\\?":)\d+`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			direct, viaSDK := newServer(false), newServer(true)
			open := rawSession
			if tt.modern {
				open = rawPipe
			}
			sendD, recvD := open(t, direct, mcp.LineTransport)
			sendS, recvS := open(t, viaSDK, mcp.LineTransport)
			for _, line := range tt.lines {
				sendD(line)
				sendS(line)
				got, want := pid.ReplaceAll(recvD(), []byte("${1}0")), pid.ReplaceAll(recvS(), []byte("${1}0"))
				var g, w any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("%s: direct answer %q: %v", line, got, err)
				}
				if err := json.Unmarshal(want, &w); err != nil {
					t.Fatalf("%s: go-sdk answer %q: %v", line, want, err)
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("%s:\ndirect: %s\ngo-sdk: %s", line, got, want)
				}
			}
			if n := direct.DirectCalls(); n != tt.direct {
				t.Errorf("%d calls answered directly, want %d", n, tt.direct)
			}
			if n := viaSDK.DirectCalls(); n != 0 {
				t.Errorf("the go-sdk server answered %d calls directly", n)
			}
		})
	}
}

// FuzzDirectCall: whatever tools/call params arrive, the server answering
// calls directly answers as go-sdk's dispatch does. The tools are
// synthetic (their plugin does not exist, so a call fails the same way
// every time) and use_skill, which needs no process.
func FuzzDirectCall(f *testing.F) {
	load := syntheticWorkspace(f, 2, 2)
	var sends []func(string)
	var recvs []func() []byte
	for _, viaSDK := range []bool{false, true} {
		srv, err := mcp.New(context.Background(), mcp.Options{Load: load, IdleTimeout: -1, Version: "0.1.0"})
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(srv.Close)
		if viaSDK {
			srv.ViaSDK()
		}
		send, recv := rawSession(f, srv, mcp.LineTransport)
		sends, recvs = append(sends, send), append(recvs, recv)
	}
	for _, s := range []string{
		`{"name":"skill_00_tool_00","arguments":{"query":"q"}}`,
		`{"name":"use_skill","arguments":{"skill":"skill-01"}}`,
		`{"name":"use_skill"}`,
		`{"name":"nope"}`,
		`{"name":"use_skill","arguments":{"skill":"skill-00"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}`,
		`{"name":"use_skill","arguments":{"skill":"skill-00"},"_meta":{"progressToken":1}}`,
		`{"name":"use_skill","arguments":null}`,
		`{"name":"use_skill","arguments":{"skill":"skill-00"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":1}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
		if !json.Valid([]byte(line)) || strings.ContainsAny(line, "\n\r") {
			return
		}
		var answers [2]any
		for i := range sends {
			sends[i](line)
			if err := json.Unmarshal(recvs[i](), &answers[i]); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(answers[0], answers[1]) {
			t.Errorf("params %s:\ndirect: %v\ngo-sdk: %v", params, answers[0], answers[1])
		}
	})
}
