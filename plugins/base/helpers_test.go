package base

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/sdk"
	"github.com/agentskills/agent/sdk/sdktest"
)

// testWS is a workspace folder with files and the base skill served over
// the sdk's real gRPC adapters.
type testWS struct {
	t    *testing.T
	dir  string
	home string
	c    *sdktest.Client
}

func newTestWS(t *testing.T, files map[string]string) *testWS {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "ws")
	home := filepath.Join(parent, "agent-home")
	for _, d := range []string{dir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, dir, files)
	return &testWS{t: t, dir: dir, home: home, c: sdktest.Run(t, New(Config{Root: dir, Home: home, Environ: os.Environ()}))}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// call invokes tool and decodes a successful result into out (when not
// nil). It returns the result message and the tool error code ("" on
// success).
func (w *testWS) call(tool string, args any, out any) (msg, code string) {
	w.t.Helper()
	res, err := w.c.Call(context.Background(), tool, args)
	if err != nil {
		var e *sdk.Error
		if !errors.As(err, &e) {
			w.t.Fatalf("%s: not a tool error: %v", tool, err)
		}
		return e.Message, e.Code
	}
	if out != nil {
		if err := json.Unmarshal(res.Value, out); err != nil {
			w.t.Fatalf("%s: decode %s: %v", tool, res.Value, err)
		}
	}
	return res.Message, ""
}

func (w *testWS) read(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
