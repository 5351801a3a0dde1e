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
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
)

// BenchmarkWarmCall compares one warm tool call through the host (the
// floor: go-plugin's gRPC to the running plugin) with the same call as an
// MCP tools/call over stdio to a real `agent mcp` process, in the same run
// (SPEC §11: mcp ≤ 1.5× host).
func BenchmarkWarmCall(b *testing.B) {
	home := sharedHome(b)
	args := map[string]any{"text": "hi"}
	raw, _ := json.Marshal(args)
	b.Run("host", func(b *testing.B) {
		h := probeHost(b, home)
		ctx := context.Background()
		if _, err := h.Invoke(ctx, "probe", "echo", raw); err != nil {
			b.Fatal(err)
		}
		cpu := startCPU(h.PID("probe"))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := h.Invoke(ctx, "probe", "echo", raw); err != nil {
				b.Fatal(err)
			}
		}
		cpu.report(b)
	})
	// alternating makes one host call and one MCP call per iteration, so
	// that both see the same machine load; mcp/host is the SPEC's ratio.
	b.Run("alternating", func(b *testing.B) {
		s := connect(b, home, nil)
		params := &sdkmcp.CallToolParams{Name: "echo", Arguments: args}
		alternateWithHost(b, home, raw, func() {
			if res, err := s.CallTool(context.Background(), params); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		})
	})
	// alternating-raw is alternating with the least client there is: a
	// JSON-RPC line written to `agent mcp`'s stdin and the answer line
	// read from its stdout, undecoded. What it adds to the host's call is
	// the server and the one more process hop, not a client library.
	b.Run("alternating-raw", func(b *testing.B) {
		stdin, stdout := startRaw(b, home)
		out := bufio.NewReaderSize(stdout, 1<<20)
		roundTrip := func(line string) []byte {
			if _, err := io.WriteString(stdin, line+"\n"); err != nil {
				b.Fatal(err)
			}
			answer, err := out.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			return answer
		}
		roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
			b.Fatal(err)
		}
		call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
		alternateWithHost(b, home, raw, func() {
			if answer := roundTrip(call); !bytes.Contains(answer, []byte(`"hi"`)) || bytes.Contains(answer, []byte(`"isError":true`)) {
				b.Fatalf("tools/call answer: %.300s", answer)
			}
		})
	})
	b.Run("mcp-stdio", func(b *testing.B) {
		s := connect(b, home, nil)
		params := &sdkmcp.CallToolParams{Name: "echo", Arguments: args}
		ctx := context.Background()
		if res, err := s.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		cpu := startCPU(append(children(s.cmd.Process.Pid), s.cmd.Process.Pid)...)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if res, err := s.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		cpu.report(b)
	})
}

// alternateWithHost makes one warm host call to home's probe plugin and
// one mcpCall per iteration, so that both see the same machine load, and
// reports both and mcp/host, the SPEC's ratio. Each is made once first.
func alternateWithHost(b *testing.B, home string, raw json.RawMessage, mcpCall func()) {
	h := probeHost(b, home)
	ctx := context.Background()
	hostCall := func() {
		if _, err := h.Invoke(ctx, "probe", "echo", raw); err != nil {
			b.Fatal(err)
		}
	}
	hostCall()
	mcpCall()
	var hostT, mcpT time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		hostCall()
		t1 := time.Now()
		mcpCall()
		hostT += t1.Sub(t0)
		mcpT += time.Since(t1)
	}
	b.ReportMetric(float64(hostT)/float64(b.N), "host-ns/call")
	b.ReportMetric(float64(mcpT)/float64(b.N), "mcp-ns/call")
	b.ReportMetric(float64(mcpT)/float64(hostT), "mcp/host")
}

// probeHost is a host with home's probe plugin registered (not yet
// started), closed when b ends: the floor the MCP calls are compared to.
func probeHost(b *testing.B, home string) *host.Host {
	b.Helper()
	e, err := registry.NewStore(home).Get("probe")
	if err != nil {
		b.Fatal(err)
	}
	h := host.New(host.WithStateDir(filepath.Join(b.TempDir(), "state")))
	b.Cleanup(func() { _ = h.Close() })
	h.Register(host.Plugin{Name: "probe", Path: e.Plugin.Path, SHA256: e.Plugin.SHA256, Dir: e.Path})
	return h
}

// cpuMeter measures the CPU time this process and the given processes use
// during a benchmark: on a loaded shared machine wall time per call is
// mostly waiting to be scheduled, CPU time per call is not.
type cpuMeter struct {
	pids              []int
	startSelf, startP time.Duration
}

func startCPU(pids ...int) *cpuMeter {
	m := &cpuMeter{pids: pids}
	m.startSelf, m.startP = m.self(), m.procs()
	return m
}

func (m *cpuMeter) self() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (m *cpuMeter) procs() time.Duration {
	var d time.Duration
	for _, pid := range m.pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		d += time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
	}
	return d
}

// report adds cpu-ns/op (everything), and self-cpu-ns/op (this process:
// the caller) when other processes were measured.
func (m *cpuMeter) report(b *testing.B) {
	self, procs := m.self()-m.startSelf, m.procs()-m.startP
	b.ReportMetric(float64(self+procs)/float64(b.N), "cpu-ns/op")
	if len(m.pids) > 0 {
		b.ReportMetric(float64(self)/float64(b.N), "self-cpu-ns/op")
	}
}

// BenchmarkWarmCallInProcess is tools/call through the same server code
// with the client in this process: no extra process hops, so a CPU profile
// shows what go-sdk and the server themselves cost. "stdio" serves on the
// transport ServeStdio uses, over a pipe pair; "sdk-inmemory" on go-sdk's
// in-memory transport.
func BenchmarkWarmCallInProcess(b *testing.B) {
	b.Run("stdio", func(b *testing.B) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		benchInProcess(b, mcp.LineTransport(sr, sw), &sdkmcp.IOTransport{Reader: cr, Writer: cw})
	})
	b.Run("sdk-inmemory", func(b *testing.B) {
		ct, st := sdkmcp.NewInMemoryTransports()
		benchInProcess(b, st, ct)
	})
}

func benchInProcess(b *testing.B, st, ct sdkmcp.Transport) {
	home := sharedHome(b)
	srv, err := mcp.New(context.Background(), mcp.Options{
		Load: func(ctx context.Context) (*workspace.Workspace, error) {
			return workspace.Load(ctx, workspace.Config{Home: home, Skills: "all", AgentVersion: "0.1.0"})
		},
		IdleTimeout: -1,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	// The label marks the server's goroutines (and those they start) in a
	// CPU profile: go tool pprof -tagfocus side=server.
	go pprof.Do(ctx, pprof.Labels("side", "server"), func(ctx context.Context) {
		defer close(done)
		_ = srv.ServeTransport(ctx, st)
	})
	defer func() { cancel(); <-done }()
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		b.Fatal(err, res)
	}
	cpu := startCPU(children(os.Getpid())...)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	cpu.report(b)
}

// BenchmarkWarmCallServer is SPEC §11's warm tools/call ratio with the
// client taken out: the server runs in this process on the transport
// `agent mcp` serves stdio with, a raw JSON-RPC tools/call line goes in
// and the answer line comes out (no client decoding, as ToolsList50/server
// does), and each iteration also makes one host call to the same plugin
// binary, so both see the same load. server/host is what serving a call
// over MCP adds to the host's call; WarmCall/alternating adds go-sdk's
// client and one more process hop on top. sdk/host is the same call
// through go-sdk's dispatch (Server.ViaSDK), as before directCalls, in
// the same iterations.
func BenchmarkWarmCallServer(b *testing.B) {
	home := sharedHome(b)
	raw := json.RawMessage(`{"text":"hi"}`)
	h := probeHost(b, home)
	serve := func(viaSDK bool) (send func(string), recv func() []byte) {
		srv, err := mcp.New(context.Background(), mcp.Options{
			Load: func(ctx context.Context) (*workspace.Workspace, error) {
				return workspace.Load(ctx, workspace.Config{Home: home, Skills: "all", AgentVersion: "0.1.0"})
			},
			IdleTimeout: -1,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(srv.Close)
		if viaSDK {
			srv.ViaSDK()
		}
		return rawSession(b, srv, mcp.LineTransport)
	}
	send, recv := serve(false)
	sendSDK, recvSDK := serve(true)
	ctx := context.Background()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	for _, s := range []struct {
		send func(string)
		recv func() []byte
	}{{send, recv}, {sendSDK, recvSDK}} {
		s.send(call)
		if first := s.recv(); !bytes.Contains(first, []byte(`"hi"`)) || bytes.Contains(first, []byte(`"isError":true`)) {
			b.Fatalf("tools/call answer: %.300s", first)
		}
	}
	if _, err := h.Invoke(ctx, "probe", "echo", raw); err != nil {
		b.Fatal(err)
	}
	var hostT, srvT, sdkT time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		if _, err := h.Invoke(ctx, "probe", "echo", raw); err != nil {
			b.Fatal(err)
		}
		// The two servers take turns going first.
		t1 := time.Now()
		if i%2 == 0 {
			send(call)
			recv()
			t2 := time.Now()
			sendSDK(call)
			recvSDK()
			srvT += t2.Sub(t1)
			sdkT += time.Since(t2)
		} else {
			sendSDK(call)
			recvSDK()
			t2 := time.Now()
			send(call)
			recv()
			sdkT += t2.Sub(t1)
			srvT += time.Since(t2)
		}
		hostT += t1.Sub(t0)
	}
	b.ReportMetric(float64(hostT)/float64(b.N), "host-ns/call")
	b.ReportMetric(float64(srvT)/float64(b.N), "server-ns/call")
	b.ReportMetric(float64(sdkT)/float64(b.N), "sdk-ns/call")
	b.ReportMetric(float64(srvT)/float64(hostT), "server/host")
	b.ReportMetric(float64(sdkT)/float64(hostT), "sdk/host")
}
