//go:build reliability

package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentskills/agent/internal/testutil/nspid"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReliabilityMCP is SPEC §12's MCP trial. 20 clients make 500 calls
// each at once against one `agent mcp --http` whose plugin crashes on 10%
// of the calls, and cancel 2% of them mid-call: every call is answered (a
// result, plugin_crashed, or the client's own cancellation) and the server
// never dies. Then a client that cancels a call, and a stdio client that
// goes away mid-call, cancel their plugin calls; and a SIGKILLed server
// leaves no process behind.
func TestReliabilityMCP(t *testing.T) {
	t.Parallel()
	const clients, perClient = 20, 500
	home := sharedHome(t)
	url, stderr := httpServer(t, home, "--token", "rel")
	var ok, crashed, canceled, other atomic.Int64
	var firstOther atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: fmt.Sprintf("c%d", c), Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: "rel"}}}, nil)
			if err != nil {
				other.Add(perClient)
				firstOther.CompareAndSwap(nil, err.Error())
				return
			}
			defer cs.Close()
			for i := range perClient {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				name, args := "echo", map[string]any{"text": fmt.Sprint(i)}
				switch {
				case (c*perClient+i)%10 == 3:
					name, args = "crash", map[string]any{}
				case (c*perClient+i)%50 == 7:
					name, args = "slow", map[string]any{"millis": 60000}
					time.AfterFunc(50*time.Millisecond, cancel)
				}
				res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: name, Arguments: args})
				cancel()
				switch {
				case err != nil && errors.Is(err, context.Canceled):
					canceled.Add(1)
				case err != nil:
					other.Add(1)
					firstOther.CompareAndSwap(nil, err.Error())
				case !res.IsError:
					ok.Add(1)
				case strings.Contains(text(res), `"plugin_crashed"`):
					crashed.Add(1)
				default:
					other.Add(1)
					firstOther.CompareAndSwap(nil, text(res))
				}
			}
		}()
	}
	wg.Wait()
	total := ok.Load() + crashed.Load() + canceled.Load() + other.Load()
	result("mcp concurrent", "%d clients × %d calls in %s: %d answered (%d ok, %d plugin_crashed, %d canceled by the client), %d other",
		clients, perClient, time.Since(start).Round(time.Second), total, ok.Load(), crashed.Load(), canceled.Load(), other.Load())
	if total != clients*perClient || other.Load() != 0 {
		t.Errorf("%d of %d calls answered as expected; first other: %v\nserver stderr (tail): %s", total-other.Load(), clients*perClient, firstOther.Load(), tail(stderr.String()))
	}
	// The server is still alive and answers.
	cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "after", Version: "1"}, nil).Connect(context.Background(), &sdkmcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: "rel"}}}, nil)
	if err != nil {
		t.Fatalf("server gone after the trial: %v", err)
	}
	if res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}}); err != nil || res.IsError {
		t.Errorf("call after the trial: %v %v", err, res)
	}
	cs.Close()

	t.Run("client goes away", func(t *testing.T) {
		// The client's stdin pipe is closed mid-call, as when a client
		// dies (go-sdk's own Close waits for running calls first).
		cmd := exec.Command(agentBin, "mcp")
		cmd.Env = env(home)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waiting := false // once cmd.Wait may have reaped it, its group id is not ours
		t.Cleanup(func() {
			if !waiting {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		})
		cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "gone", Version: "1"}, nil).Connect(context.Background(), &sdkmcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "k"}})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		pid := nspid.Host(cmd.Process.Pid, int(res.StructuredContent.(map[string]any)["pid"].(float64)))
		if pid == 0 {
			t.Fatal("no process under agent mcp runs the plugin that answered")
		}
		mark := filepath.Join(t.TempDir(), "mark")
		go func() {
			_, _ = cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "slow", Arguments: map[string]any{"millis": 60000, "mark": mark}})
		}()
		time.Sleep(500 * time.Millisecond)
		t0 := time.Now()
		stdin.Close()
		exited := make(chan error, 1)
		waiting = true
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("agent mcp exit after stdin EOF: %v", err)
			}
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatal("agent mcp did not end after its client went away mid-call")
		}
		b, _ := os.ReadFile(mark)
		if alive(pid) {
			t.Errorf("plugin %d still runs after its client went away", pid)
		} else {
			result("mcp client gone", "stdin closed mid-call: server exited in %s, plugin call ended (canceled in the plugin: %v, plugin process gone: true)",
				time.Since(t0).Round(10*time.Millisecond), string(b) == "canceled")
		}
	})

	t.Run("SIGKILL leaves no process", func(t *testing.T) {
		cmd := exec.Command(agentBin, "mcp")
		cmd.Env = env(home)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cs, err := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "k", Version: "1"}, nil).Connect(context.Background(), &sdkmcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(context.Background(), &sdkmcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "k"}})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		pid := nspid.Host(cmd.Process.Pid, int(res.StructuredContent.(map[string]any)["pid"].(float64)))
		if pid == 0 {
			t.Fatal("no process under agent mcp runs the plugin that answered")
		}
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cs.Close()
		if !eventually(15*time.Second, func() bool { return !alive(pid) }) {
			t.Errorf("plugin %d outlived its SIGKILLed server", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		} else {
			result("mcp sigkill", "SIGKILL of agent mcp: its plugin exited on its own")
		}
	})
}

func result(name, format string, a ...any) {
	fmt.Printf("RESULT %s: %s\n", name, fmt.Sprintf(format, a...))
}

func tail(s string) string {
	if len(s) > 3000 {
		return s[len(s)-3000:]
	}
	return s
}
