//go:build unix

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// inspectorDir holds package.json and package-lock.json pinning
// @modelcontextprotocol/inspector; `npm ci` there (done by .ci/run, or by
// the test when node_modules is missing) installs it.
const inspectorDir = "testdata/inspector"

var (
	inspectorOnce sync.Once
	inspectorBin  string
	inspectorWhy  string // why the inspector is not available
)

// inspector returns the inspector CLI, installing it with npm ci when
// needed. It skips the test only when npm is missing or cannot reach the
// registry.
func inspector(t *testing.T) string {
	t.Helper()
	inspectorOnce.Do(func() {
		bin := filepath.Join(inspectorDir, "node_modules", ".bin", "mcp-inspector")
		if _, err := os.Stat(bin); err != nil {
			npm, err := exec.LookPath("npm")
			if err != nil {
				inspectorWhy = "npm is not installed (.ci/run installs nodejs and npm from Debian)"
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
			cmd.Dir = inspectorDir
			if out, err := cmd.CombinedOutput(); err != nil {
				inspectorWhy = "npm ci could not install the pinned MCP inspector (is the npm registry reachable?): " + err.Error() + "\n" + string(out)
				return
			}
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			inspectorWhy = err.Error()
			return
		}
		inspectorBin = abs
	})
	if inspectorBin == "" {
		t.Skip("MCP inspector unavailable: " + inspectorWhy)
	}
	return inspectorBin
}

// runInspector runs `mcp-inspector --cli args...` and decodes its JSON.
func runInspector(t *testing.T, args ...string) map[string]any {
	t.Helper()
	return runInspectorExit(t, 0, args...)
}

// runInspectorExit is runInspector for a run that exits with code (the
// inspector exits 5 when a tool answers isError).
func runInspectorExit(t *testing.T, code int, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, inspector(t), append([]string{"--cli"}, args...)...)
	cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "catalog.json"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != code {
		t.Fatalf("inspector %q: %v\nstdout: %s\nstderr: %s", args, err, stdout.String(), stderr.String())
	}
	var v map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
		t.Fatalf("inspector %q printed %q: %v", args, stdout.String(), err)
	}
	return v
}

// TestInspector drives agent mcp with a client nobody here wrote: the MCP
// inspector's CLI from npm, over stdio and over --http.
func TestInspector(t *testing.T) {
	t.Parallel()
	inspector(t)
	home := sharedHome(t)
	url, _ := httpServer(t, home, "--token", "insp3ctor")
	// MCP clients start stdio servers with a minimal environment, so the
	// server's settings go in with -e, as in a client's config snippet.
	stdio := []string{"-e", "AGENT_HOME=" + home, "-e", "AGENT_SKILLS=all", agentBin, "mcp"}
	http := []string{url, "--transport", "http", "--header", "Authorization: Bearer insp3ctor"}
	for _, tr := range []struct {
		name   string
		target []string
	}{{"stdio", stdio}, {"http", http}} {
		t.Run(tr.name+"/tools-list", func(t *testing.T) {
			v := runInspector(t, append(tr.target, "--method", "tools/list")...)
			var names []string
			for _, tool := range v["tools"].([]any) {
				names = append(names, tool.(map[string]any)["name"].(string))
			}
			for _, want := range []string{"use_skill", "echo", "script_run"} {
				if !slices.Contains(names, want) {
					t.Errorf("tools/list lacks %s: %v", want, names)
				}
			}
		})
		// --strict puts the inspector's schema portability findings (such
		// as a type list like ["boolean","null"]) into the JSON envelope.
		t.Run(tr.name+"/schema-lint", func(t *testing.T) {
			v := runInspector(t, append(tr.target, "--method", "tools/list", "--strict", "--format", "json")...)
			if _, ok := v["result"].(map[string]any)["tools"].([]any); !ok {
				t.Fatalf("tools/list --format json = %v", v)
			}
			// Every tool here (script_run and use_skill among them) passes.
			if findings, _ := v["schemaFindings"].([]any); len(findings) > 0 {
				b, _ := json.MarshalIndent(findings, "", "  ")
				t.Errorf("the inspector finds less portable schemas: %s", b)
			}
		})
		t.Run(tr.name+"/tools-call", func(t *testing.T) {
			v := runInspector(t, append(tr.target, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=from the inspector")...)
			sc, _ := v["structuredContent"].(map[string]any)
			if v["isError"] == true || sc["text"] != "from the inspector" {
				t.Errorf("tools/call echo = %v", v)
			}
			content := v["content"].([]any)
			if txt, _ := content[0].(map[string]any)["text"].(string); !strings.Contains(txt, `"text":"from the inspector"`) {
				t.Errorf("text content = %v", content)
			}
		})
		t.Run(tr.name+"/tool-error", func(t *testing.T) {
			v := runInspectorExit(t, 5, append(tr.target, "--method", "tools/call", "--tool-name", "fail")...)
			sc, _ := v["structuredContent"].(map[string]any)
			if v["isError"] != true || sc["error"] != "probe_failed" {
				t.Errorf("tools/call fail = %v", v)
			}
		})
	}
	t.Run("stdio/prompts-get", func(t *testing.T) {
		v := runInspector(t, append(stdio, "--method", "prompts/get", "--prompt-name", "probe", "--prompt-args", "arguments=Ada kindly")...)
		b, _ := json.Marshal(v)
		if !strings.Contains(string(b), "Probe Ada with kindly. All: Ada kindly") {
			t.Errorf("prompts/get = %s", b)
		}
	})
	t.Run("stdio/resources-read", func(t *testing.T) {
		v := runInspector(t, append(stdio, "--method", "resources/read", "--uri", "skill://probe/references/guide.md")...)
		b, _ := json.Marshal(v)
		if !strings.Contains(string(b), "Read me on demand.") {
			t.Errorf("resources/read = %s", b)
		}
	})
}
