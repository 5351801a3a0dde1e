package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"

	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/agentskills/agent/sdk"
)

// Client calls a skill under test. It implements sdk.Skill.
type Client struct {
	skill sdk.Skill
	pid   int
}

var _ sdk.Skill = (*Client)(nil)

// Describe lists the skill's tools.
func (c *Client) Describe(ctx context.Context) ([]sdk.ToolInfo, error) {
	return c.skill.Describe(ctx)
}

// Invoke calls tool with raw JSON arguments. A tool failure is an
// *sdk.Error; any other error means the plugin could not be reached.
func (c *Client) Invoke(ctx context.Context, tool string, args json.RawMessage) (sdk.Result, error) {
	return c.skill.Invoke(ctx, tool, args)
}

// Call marshals args (a struct or map) with encoding/json and invokes tool.
func (c *Client) Call(ctx context.Context, tool string, args any) (sdk.Result, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return sdk.Result{}, fmt.Errorf("marshal arguments for %s: %w", tool, err)
	}
	return c.skill.Invoke(ctx, tool, b)
}

// PID is the plugin's process id for a client from Start, 0 for Run.
func (c *Client) PID() int { return c.pid }

// Run serves s in this process and returns a client connected to it
// through the same gRPC adapters the host uses, over an in-memory
// connection. Everything is torn down when the test ends.
func Run(t testing.TB, s sdk.Skill) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	if err := grpcPlugin(sdk.PluginSets(s)[sdk.ProtocolVersion]).GRPCServer(nil, srv); err != nil {
		t.Fatalf("sdktest.Run: register skill: %v", err)
	}
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///bufconn",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("sdktest.Run: dial: %v", err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
	})
	raw, err := grpcPlugin(sdk.PluginSets(nil)[sdk.ProtocolVersion]).GRPCClient(context.Background(), nil, conn)
	if err != nil {
		t.Fatalf("sdktest.Run: client: %v", err)
	}
	return &Client{skill: raw.(sdk.Skill)}
}

func grpcPlugin(ps plugin.PluginSet) plugin.GRPCPlugin {
	return ps[sdk.PluginName].(plugin.GRPCPlugin)
}

// Build compiles the Go main package pkg (an import path, or a directory
// such as ".") with `go build -trimpath` into t.TempDir() and returns the
// binary's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	name := filepath.Base(pkg)
	if abs, err := filepath.Abs(pkg); err == nil && (strings.HasPrefix(pkg, ".") || filepath.IsAbs(pkg)) {
		name = filepath.Base(abs)
	}
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command(goTool(), "build", "-trimpath", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sdktest.Build: go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// Start runs binary as a real plugin subprocess over go-plugin, with
// exactly env as its environment (plus go-plugin's own variables), and
// returns a client. The process is killed when the test ends. Plugin logs
// go to t.Log.
func Start(t testing.TB, binary string, env ...string) *Client {
	t.Helper()
	cmd := exec.Command(binary)
	cmd.Env = env
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		VersionedPlugins: sdk.PluginSets(nil),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		StartTimeout:     30 * time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:   filepath.Base(binary),
			Output: testWriter{t},
			Level:  hclog.Info,
		}),
	})
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("sdktest.Start %s: %v", binary, err)
	}
	raw, err := rpc.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("sdktest.Start %s: dispense: %v", binary, err)
	}
	pid, _ := strconv.Atoi(client.ID())
	return &Client{skill: raw.(sdk.Skill), pid: pid}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

var _ io.Writer = testWriter{}
