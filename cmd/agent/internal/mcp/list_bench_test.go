//go:build unix

package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/disclosure"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
)

// syntheticWorkspace has skills skills of tools tools each, as the registry
// cache describes them: realistic descriptions and schemas, and a plugin
// path that does not exist, so that any attempt to start a process fails.
func syntheticWorkspace(tb testing.TB, skills, tools int) func(context.Context) (*workspace.Workspace, error) {
	tb.Helper()
	var all []registry.Entry
	var active []*workspace.ActiveSkill
	for i := range skills {
		name := fmt.Sprintf("skill-%02d", i)
		e := registry.Entry{
			Name:        name,
			Canonical:   name,
			Trusted:     true,
			Plugin:      &registry.Plugin{Path: "/nonexistent/" + name},
			Description: fmt.Sprintf("Work with the %s service: look things up, change them and report on them. Use it when the user mentions %s.", name, name),
			Origin:      registry.Origin{Source: registry.SourceGit},
		}
		for j := range tools {
			e.Tools = append(e.Tools, registry.Tool{
				Name:        fmt.Sprintf("%s_tool_%02d", strings.ReplaceAll(name, "-", "_"), j),
				Description: fmt.Sprintf("Operation %d of %s: fetch the records that match a query and return them as a list, newest first.", j, name),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for, in the service's query syntax"},"limit":{"type":"integer","description":"the most records to return (default 20)"},"include_archived":{"type":"boolean","description":"also search archived records"}},"required":["query"],"additionalProperties":false}`),
			})
		}
		all = append(all, e)
		active = append(active, &workspace.ActiveSkill{Entry: &e, Manifest: &manifest.Manifest{Name: name, Description: e.Description, Body: "Use the tools."}})
	}
	return func(context.Context) (*workspace.Workspace, error) {
		return workspace.New(workspace.Config{Home: tb.TempDir()}, all, active)
	}
}

// inProcess serves load over an in-memory transport and returns a client
// session.
func inProcess(tb testing.TB, load func(context.Context) (*workspace.Workspace, error), lazy bool) *sdkmcp.ClientSession {
	tb.Helper()
	srv, err := mcp.New(context.Background(), mcp.Options{Load: load, Lazy: lazy, IdleTimeout: -1})
	if err != nil {
		tb.Fatal(err)
	}
	ct, st := sdkmcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTransport(ctx, st) }()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close(); cancel(); <-done })
	return cs
}

// BenchmarkToolsList50 is tools/list on a warm server with 50 skills
// (SPEC §11: ≤ 2 ms, no process started), of one tool each (50 tools) and
// of 6 tools each (300 tools): "server" is the server's side alone (a raw
// JSON-RPC line in, the response line out, no client decoding),
// "roundtrip" adds go-sdk's client, which re-marshals every tool's schema
// to check it. procs reports processes started during the loop, cpu-ns/op
// the CPU time this process used per list.
func BenchmarkToolsList50(b *testing.B) {
	b.Run("server/tools=50", func(b *testing.B) { benchListServer(b, 1, mcp.LineTransport) })
	b.Run("server/tools=300", func(b *testing.B) { benchListServer(b, 6, mcp.LineTransport) })
	// go-sdk's own IOTransport instead of the stdio transport `agent mcp`
	// uses, for comparison.
	b.Run("server-sdkio/tools=300", func(b *testing.B) { benchListServer(b, 6, sdkIO) })
	b.Run("roundtrip", benchListRoundTrip)
}

func sdkIO(r io.ReadCloser, w io.Writer) sdkmcp.Transport {
	return &sdkmcp.IOTransport{Reader: r, Writer: w.(io.WriteCloser)}
}

func benchListServer(b *testing.B, tools int, transport func(io.ReadCloser, io.Writer) sdkmcp.Transport) {
	srv, err := mcp.New(context.Background(), mcp.Options{Load: syntheticWorkspace(b, 50, tools), IdleTimeout: -1})
	if err != nil {
		b.Fatal(err)
	}
	send, recv := rawSession(b, srv, transport)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	send(list)
	last := fmt.Sprintf("skill_49_tool_%02d", tools-1)
	if first := recv(); !bytes.Contains(first, []byte(last)) {
		b.Fatalf("tools/list answer lacks the last tool %s: %.300s", last, first)
	}
	before := len(children(os.Getpid()))
	cpu := startCPU()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		send(list)
		recv()
	}
	cpu.report(b)
	b.ReportMetric(float64(len(children(os.Getpid()))-before), "procs")
}

// rawSession serves srv on transport over a pipe pair in this process and
// initialises a session with raw JSON-RPC lines: send writes one request
// line, recv reads one answer line (valid until the next recv).
func rawSession(tb testing.TB, srv *mcp.Server, transport func(io.ReadCloser, io.Writer) sdkmcp.Transport) (send func(string), recv func() []byte) {
	tb.Helper()
	send, recv = rawPipe(tb, srv, transport)
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return send, recv
}

// rawPipe serves srv on transport over a pipe pair: send writes a line to
// it, recv reads its next line.
func rawPipe(tb testing.TB, srv *mcp.Server, transport func(io.ReadCloser, io.Writer) sdkmcp.Transport) (send func(string), recv func() []byte) {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeTransport(ctx, transport(inR, outW)) }()
	tb.Cleanup(func() { inW.Close(); cancel(); outR.Close(); <-done })
	out := bufio.NewReaderSize(outR, 1<<20)
	send = func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			tb.Fatal(err)
		}
	}
	recv = func() []byte {
		line, err := out.ReadSlice('\n')
		if err != nil {
			tb.Fatal(err)
		}
		return line
	}
	return send, recv
}

func benchListRoundTrip(b *testing.B) {
	cs := inProcess(b, syntheticWorkspace(b, 50, 6), false)
	ctx := context.Background()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Tools) < 300 {
		b.Fatalf("listed %d tools, want ≥ 300", len(res.Tools))
	}
	before := len(children(os.Getpid()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(children(os.Getpid()))-before), "procs")
}

// TestLazyTokens is SPEC §11's --lazy row: tools/list of 10 skills × 10
// tools in lazy mode holds ≤ 10% of the cl100k_base tokens of full mode.
func TestLazyTokens(t *testing.T) {
	t.Parallel()
	full, lazy := listTokens(t, false), listTokens(t, true)
	ratio := float64(lazy) / float64(full)
	t.Logf("tools/list tokens, 10 skills × 10 tools: full %d, --lazy %d (%.1f%%)", full, lazy, 100*ratio)
	if ratio > 0.10 {
		t.Errorf("--lazy is %.1f%% of full mode, want ≤ 10%%", 100*ratio)
	}
}

// BenchmarkLazyTokens reports the same counts for make bench.
func BenchmarkLazyTokens(b *testing.B) {
	var full, lazy int
	for b.Loop() {
		full, lazy = listTokens(b, false), listTokens(b, true)
	}
	b.ReportMetric(float64(full), "full-tokens")
	b.ReportMetric(float64(lazy), "lazy-tokens")
	b.ReportMetric(100*float64(lazy)/float64(full), "lazy-%")
}

// listTokens counts the cl100k_base tokens of the tools/list result a
// client puts in its model's context.
func listTokens(tb testing.TB, lazy bool) int {
	tb.Helper()
	cs := inProcess(tb, syntheticWorkspace(tb, 10, 10), lazy)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := json.Marshal(res.Tools)
	if err != nil {
		tb.Fatal(err)
	}
	tok := disclosure.DefaultTokenizer()
	if err := tok.Load(); err != nil {
		tb.Fatal(err)
	}
	return tok.Count(string(b))
}
