package jaegertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Version is the Jaeger release the tests run; the Makefile's
// JAEGER_VERSION builds the same.
const Version = "v1.76.0"

// EnvBinary names the Jaeger binary to run instead of the one `make
// jaeger` caches.
const EnvBinary = "AGENT_JAEGER"

// config is the whole collector configuration: OTLP over HTTP in, the
// in-memory store, and the query extension (its HTTP API and the gRPC
// API it always serves) on the ports the test picked. No health check,
// pprof, sampling or metrics endpoint, nothing on other interfaces.
const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %s
    grpc:
      endpoint: %s
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// Jaeger is a running Jaeger.
type Jaeger struct {
	// OTLP is the base URL of the OTLP/HTTP receiver, as it goes into
	// OTEL_EXPORTER_OTLP_ENDPOINT.
	OTLP string
	// Query is the base URL of the query API.
	Query string

	log *logBuffer
}

// Binary is the Jaeger that Start runs: $AGENT_JAEGER, else what `make
// jaeger` built under the user's cache folder.
func Binary() string {
	if b := os.Getenv(EnvBinary); b != "" {
		return b
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "agent-ci", "jaeger-"+Version)
}

// Start runs Jaeger for the test and kills it at cleanup. Without the
// binary it skips, or fails under CI=true, where .ci/run must have built it.
func Start(t testing.TB) *Jaeger {
	t.Helper()
	bin := Binary()
	if fi, err := os.Stat(bin); bin == "" || err != nil || fi.IsDir() {
		msg := fmt.Sprintf("Jaeger %s is not at %q: run `make jaeger` (it builds it into ~/.cache/agent-ci once, about 1 GB of modules cold), or set %s to a Jaeger binary", Version, bin, EnvBinary)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; .ci/run builds it before make test")
		}
		t.Skip(msg)
	}
	var lastErr error
	// A port picked free can be taken before Jaeger binds it; then it exits
	// and another set is tried.
	for range 3 {
		j, err := start(t, bin)
		if err == nil {
			return j
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

var errPortTaken = errors.New("a port was taken")

func start(t testing.TB, bin string) (*Jaeger, error) {
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, ports[0], ports[1], ports[2])), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Dir = dir
	// Jaeger traces nothing of its own, whatever OTEL_* the test runs with.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=none")
	j := &Jaeger{OTLP: "http://" + ports[2], Query: "http://" + ports[0], log: &logBuffer{}}
	cmd.Stdout, cmd.Stderr = j.log, j.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	if err := j.waitReady(exited, 2*time.Minute); err != nil {
		stop()
		if strings.Contains(j.log.String(), "address already in use") {
			return nil, fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return nil, fmt.Errorf("jaeger: %v\n%s", err, j.log)
	}
	t.Cleanup(stop)
	return j, nil
}

// freePorts returns n 127.0.0.1:port addresses nothing listened on a moment ago.
func freePorts(n int) ([]string, error) {
	var out []string
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// waitReady polls until the query API answers and the OTLP receiver takes
// an (empty) export.
func (j *Jaeger) waitReady(exited <-chan struct{}, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	ready := func() error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+"/api/services", nil)
		if err := do(req, nil); err != nil {
			return err
		}
		req, _ = http.NewRequestWithContext(ctx, http.MethodPost, j.OTLP+"/v1/traces", bytes.NewReader(nil))
		req.Header.Set("Content-Type", "application/x-protobuf")
		return do(req, nil)
	}
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("exited before it was ready (%v)", err)
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v: %v", limit, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Env is the environment that sends a process's traces to j over OTLP/HTTP
// as service.
func (j *Jaeger) Env(service string) []string {
	return []string{
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLP,
		"OTEL_SERVICE_NAME=" + service,
	}
}

// Log is what Jaeger wrote so far.
func (j *Jaeger) Log() string { return j.log.String() }

// Traces are the traces /api/traces finds for service.
func (j *Jaeger) Traces(ctx context.Context, service string) ([]Trace, error) {
	var body struct{ Data []Trace }
	q := url.Values{"service": {service}, "limit": {"100"}, "lookback": {"1h"}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+"/api/traces?"+q.Encode(), nil)
	if err := do(req, &body); err != nil {
		return nil, err
	}
	return body.Data, nil
}

// ErrNoTrace is returned by Trace while Jaeger does not have the trace.
var ErrNoTrace = errors.New("trace not found")

// Trace is /api/traces/{id}.
func (j *Jaeger) Trace(ctx context.Context, id string) (Trace, error) {
	var body struct{ Data []Trace }
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, j.Query+"/api/traces/"+id, nil)
	err := do(req, &body)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		return Trace{}, fmt.Errorf("%s: %w", id, ErrNoTrace)
	}
	if err != nil {
		return Trace{}, err
	}
	if len(body.Data) != 1 {
		return Trace{}, fmt.Errorf("/api/traces/%s returned %d traces", id, len(body.Data))
	}
	return body.Data[0], nil
}

// WaitTrace polls /api/traces/{id} until Jaeger has the trace and done
// accepts it (spans of one trace may arrive in several exports), and
// returns the trace done last saw. It gives up after two minutes.
func (j *Jaeger) WaitTrace(t testing.TB, id string, done func(Trace) bool) Trace {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var last Trace
	var err error
	for {
		last, err = j.Trace(ctx, id)
		if err == nil && done(last) {
			return last
		}
		select {
		case <-ctx.Done():
			if err != nil {
				t.Fatalf("trace %s: %v\njaeger log:\n%s", id, err, j.log)
			}
			return last
		case <-time.After(100 * time.Millisecond):
		}
	}
}

type statusError struct {
	url  string
	code int
	body string
}

func (e *statusError) Error() string { return fmt.Sprintf("%s: %d %s", e.url, e.code, e.body) }

func do(req *http.Request, into any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{url: req.URL.String(), code: resp.StatusCode, body: strings.TrimSpace(string(b))}
	}
	if into == nil {
		return nil
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: %w", req.URL, err)
	}
	return nil
}

// logBuffer keeps what Jaeger writes, for failure messages.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
