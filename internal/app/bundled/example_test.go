package bundled

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoPluginExampleBuilds compiles the Go plugin of the skill-authoring
// guide against this repository's sdk, so the guide cannot drift from the
// API. The program goes under testdata/ so that it is inside the module.
func TestGoPluginExampleBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	m, err := Manifest("skill-authoring")
	if err != nil {
		t.Fatal(err)
	}
	src := codeBlock(t, m.Body, "```go\n")
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "example")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(dir)
		os.Remove("testdata") // only if empty
	})
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "plugin"), "./"+filepath.ToSlash(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the guide's Go plugin does not build: %v\n%s\n%s", err, out, src)
	}
}

// TestPythonScriptExampleFollowsConventions runs the guide's PEP 723 script
// with python3: --help works, and --json prints only JSON on stdout.
func TestPythonScriptExampleFollowsConventions(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	m, err := Manifest("skill-authoring")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "title.py")
	if err := os.WriteFile(script, []byte(codeBlock(t, m.Body, "```python\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, script, "--help").Output(); err != nil || !strings.Contains(string(out), "--json") {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	out, err := exec.Command(py, script, "https://example.com", "--json").Output()
	if err != nil {
		t.Fatalf("--json: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("--json printed more than JSON: %v\n%s", err, out)
	}
}

func codeBlock(t *testing.T, body, fence string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, fence)
	if !ok {
		t.Fatalf("no %q block", strings.TrimSpace(fence))
	}
	code, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("unterminated code block")
	}
	return code
}
