//go:build unix

package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"github.com/agentskills/agent/internal/ground/platform"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// testPlugin is host/internal/testplugin, built once for the package.
var testPlugin string

func TestMain(m *testing.M) {
	// The SIGKILL test re-executes this binary as a host, and
	// TestPluginProxyUnprivileged as nobody: the plugin is built.
	if p := os.Getenv(helperEnv); p != "" {
		testPlugin = p
		os.Exit(m.Run())
	}
	// Fuzz workers run only fuzz targets, which need no plugin; building
	// one in every worker made short -fuzztime runs fail with "context
	// deadline exceeded".
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testPlugin = filepath.Join(dir, "testplugin")
	// A portable host gets a portable plugin, as plugbuild builds it.
	args := append([]string{"build", "-trimpath"}, platform.BuildFlags()...)
	cmd := exec.Command("go", append(args, "-o", testPlugin, "./internal/testplugin")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build test plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func fileSHA(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// copyPlugin puts a private copy of the test plugin in t.TempDir, for
// tests that modify the binary.
func copyPlugin(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(testPlugin)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "testplugin")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var shaOnce = sync.OnceValue(func() string {
	b, err := os.ReadFile(testPlugin)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
})

func tp(env ...string) Plugin {
	return Plugin{Name: "tp", Path: testPlugin, SHA256: shaOnce(), Env: env}
}

// syncBuffer is a log sink that tests can read while plugins write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func testLogger(w io.Writer, level hclog.Level) hclog.Logger {
	if w == nil {
		w = io.Discard
		if testing.Verbose() {
			w = os.Stderr
		}
	}
	return hclog.New(&hclog.LoggerOptions{Name: "host", Output: w, Level: level})
}

func newHost(t testing.TB, opts ...Option) *Host {
	t.Helper()
	h := New(append([]Option{WithLogger(testLogger(nil, hclog.Debug))}, opts...)...)
	t.Cleanup(func() { _ = h.Close() })
	return h
}
