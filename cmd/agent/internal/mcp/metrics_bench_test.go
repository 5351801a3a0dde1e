//go:build unix

package mcp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/cmd/agent/internal/mcp"
	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/telemetry"
)

// BenchmarkWarmCallHTTPMetrics is the warm tools/call over streamable
// HTTP with metrics on (the observer, the plugin start hook and /metrics,
// as `agent mcp --http` serves) and off, each a server in this process
// with its own plugin process, one call to each per iteration so that
// both see the same load; on/off is the cost of the metrics. "scrape" is
// one GET /metrics after those calls.
func BenchmarkWarmCallHTTPMetrics(b *testing.B) {
	home := sharedHome(b)
	const token = "bench"
	serve := func(b *testing.B, metrics *telemetry.Metrics) (*sdkmcp.ClientSession, string) {
		srv, err := mcp.New(context.Background(), mcp.Options{
			Load: func(ctx context.Context) (*workspace.Workspace, error) {
				wc := workspace.Config{Home: home, Skills: "all", AgentVersion: "0.1.0"}
				if metrics != nil {
					wc.Observer = mcp.CallMetrics(metrics)
					wc.PluginStarted = metrics.PluginStarted
				}
				return workspace.Load(ctx, wc)
			},
			IdleTimeout: -1,
		})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		addr := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- srv.ServeHTTP(ctx, mcp.HTTPOptions{Addr: "127.0.0.1:0", Token: token, Metrics: metrics.Handler(),
				Ready: func(a string) error { addr <- a; return nil }})
		}()
		var base string
		select {
		case a := <-addr:
			base = "http://" + a
		case err := <-done:
			b.Fatal(err)
		}
		b.Cleanup(func() { cancel(); <-done })
		cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
			&sdkmcp.StreamableClientTransport{Endpoint: base + mcp.Path, HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs, base
	}
	params := &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}
	call := func(b *testing.B, cs *sdkmcp.ClientSession) {
		if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}

	b.Run("alternating", func(b *testing.B) {
		metrics, err := telemetry.NewMetrics(context.Background(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer metrics.Shutdown(context.Background())
		off, _ := serve(b, nil)
		on, _ := serve(b, metrics)
		call(b, off)
		call(b, on)
		var offT, onT time.Duration
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; b.Loop(); i++ {
			// Which goes first alternates too: the second call of an
			// iteration finds the CPU caches the first one warmed.
			first, second, firstT, secondT := off, on, &offT, &onT
			if i%2 == 1 {
				first, second, firstT, secondT = on, off, &onT, &offT
			}
			t0 := time.Now()
			call(b, first)
			t1 := time.Now()
			call(b, second)
			*firstT += t1.Sub(t0)
			*secondT += time.Since(t1)
		}
		b.ReportMetric(float64(offT)/float64(b.N), "off-ns/call")
		b.ReportMetric(float64(onT)/float64(b.N), "on-ns/call")
		b.ReportMetric(float64(onT)/float64(offT), "on/off")
	})

	b.Run("scrape", func(b *testing.B) {
		metrics, err := telemetry.NewMetrics(context.Background(), "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer metrics.Shutdown(context.Background())
		on, base := serve(b, metrics)
		for range 10 {
			call(b, on)
		}
		client := &http.Client{Transport: bearer{token: token}}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			resp, err := client.Get(base + mcp.MetricsPath)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "agent_tool_calls_total") {
				b.Fatalf("GET /metrics: %d %.200s", resp.StatusCode, body)
			}
		}
	})
}
