package ocitest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Binary is the registry program Start runs.
const Binary = "docker-registry"

// Registry is a running docker-registry.
type Registry struct {
	// Host is host:port on 127.0.0.1, as it goes into oci://HOST/REPO.
	Host string
	// Storage is the registry's filesystem storage root.
	Storage string

	cmd *exec.Cmd
	log *logBuffer
}

// config is distribution's configuration: filesystem storage in the
// test's folder, no auth, deletes allowed, a port the kernel picks.
const config = `version: 0.1
log:
  level: info
  formatter: text
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: 127.0.0.1:0
  secret: ocitest
`

var listeningRE = regexp.MustCompile(`listening on (127\.0\.0\.1:\d+)`)

// Start runs docker-registry for the test and stops it at cleanup. It
// skips the test when docker-registry is not on PATH.
func Start(t testing.TB) *Registry {
	t.Helper()
	bin, err := exec.LookPath(Binary)
	if err != nil {
		t.Skipf("%s is not installed (Debian package docker-registry; .ci/run installs it): %v", Binary, err)
	}
	dir := t.TempDir()
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, storage)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	r := &Registry{Storage: storage, cmd: cmd, log: &logBuffer{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			r.log.add(line)
			if m := listeningRE.FindStringSubmatch(line); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		if !sent {
			close(addr)
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	select {
	case a, ok := <-addr:
		if !ok {
			t.Fatalf("%s exited before listening:\n%s", bin, r.log)
		}
		r.Host = a
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not report its address within 30s:\n%s", bin, r.log)
	}
	if err := r.waitReady(30 * time.Second); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, r.log)
	}
	return r
}

func (r *Registry) waitReady(limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.Host+"/v2/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Ref is oci://HOST/repo for a repository (and :tag or @digest) on r.
func (r *Registry) Ref(repoAndTag string) string { return "oci://" + r.Host + "/" + repoAndTag }

// BlobPath is where distribution's filesystem driver keeps the blob of a
// digest ("sha256:<hex>").
func (r *Registry) BlobPath(digest string) string {
	alg, hex, _ := strings.Cut(digest, ":")
	return filepath.Join(r.Storage, "docker", "registry", "v2", "blobs", alg, hex[:2], hex, "data")
}

// Log is what the registry wrote to stderr so far.
func (r *Registry) Log() string { return r.log.String() }
