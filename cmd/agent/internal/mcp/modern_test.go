//go:build unix

package mcp_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Client-side types of the skills extension, for go-sdk's own client.
type skillsListParams struct {
	sdkmcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type skillsListResult struct {
	sdkmcp.ResultBase
	ResultType string `json:"resultType"`
	TTLMs      *int64 `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
	NextCursor string `json:"nextCursor"`
	Skills     []struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
			Size   int64  `json:"size"`
		} `json:"resources"`
	} `json:"skills"`
}

// connectAt connects go-sdk's client to `agent mcp args...` asking for
// protocol revision version, with AGENT_SKILLS set to skills.
func connectAt(t *testing.T, home, version, skills string, args ...string) *sdkmcp.ClientSession {
	t.Helper()
	cmd := exec.Command(agentBin, append([]string{"mcp"}, args...)...)
	cmd.Env = env(home, "AGENT_SKILLS="+skills)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &lockedWriter{}
	cmd.Stderr = stderr
	client := sdkmcp.NewClient(&sdkmcp.Implementation{Name: "test", Version: "1"}, nil)
	must(t, sdkmcp.AddSendingCustomMethod[*skillsListParams, *skillsListResult](client, "skills/list"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdkmcp.CommandTransport{Command: cmd}, &sdkmcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %s: %v", version, err)
	}
	t.Cleanup(func() {
		// Before Close reaps the server, as in connectEnv.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cs.Close()
		if t.Failed() {
			t.Logf("agent mcp stderr:\n%s", stderr.String())
		}
	})
	return cs
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestProtocol20260728: under the 2026-07-28 revision list results must not
// differ per connection (SEP-2567), so --lazy keeps its fixed list and
// call_tool reaches every tool; the skills extension answers with its
// caching fields. Tested with go-sdk's client (the TypeScript clients stop
// at 2025-11-25).
func TestProtocol20260728(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	cs := connectAt(t, home, "2026-07-28", "all", "--lazy")
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated %q", got)
	}
	ctx := context.Background()
	names := func() []string {
		res, err := cs.ListTools(ctx, nil)
		must(t, err)
		var n []string
		for _, tool := range res.Tools {
			n = append(n, tool.Name)
		}
		return n
	}
	before := names()
	if want := []string{"call_tool", "script_help", "script_list", "script_run", "use_skill"}; !slices.Equal(before, want) {
		t.Fatalf("--lazy tools = %v, want %v", before, want)
	}
	res, err := cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "use_skill", Arguments: map[string]any{"skill": "probe", "args": []string{"Ada"}}})
	if err != nil || res.IsError {
		t.Fatalf("use_skill: %v %+v", err, res)
	}
	// The result links the skill's files as resources.
	var links []string
	for _, c := range res.Content {
		if l, ok := c.(*sdkmcp.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	if !slices.Contains(links, "skill://probe/references/guide.md") || !slices.Contains(links, "skill://probe/SKILL.md") {
		t.Errorf("use_skill links %v", links)
	}
	if after := names(); !slices.Equal(after, before) {
		t.Errorf("the list changed after use_skill: %v → %v", before, after)
	}
	res, err = cs.CallTool(ctx, &sdkmcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"tool": "echo", "arguments": map[string]any{"text": "2026"}}})
	if err != nil || res.IsError {
		t.Fatalf("call_tool echo: %v %+v", err, res)
	}
	sl, err := sdkmcp.CallCustomMethod[*skillsListParams, *skillsListResult](ctx, cs, "skills/list", &skillsListParams{})
	must(t, err)
	if sl.ResultType != "complete" || sl.TTLMs == nil || sl.CacheScope == "" || len(sl.Skills) != 3 {
		t.Fatalf("skills/list = %+v", sl)
	}
	// The bundled skill-authoring is active under all: listed and readable
	// like the installed ones (issue 35).
	var uris []string
	for _, s := range sl.Skills {
		uris = append(uris, s.URI)
	}
	if want := []string{"skill://notes/SKILL.md", "skill://probe/SKILL.md", "skill://skill-authoring/SKILL.md"}; !slices.Equal(uris, want) {
		t.Errorf("skills/list = %v, want %v", uris, want)
	}
	rr, err := cs.ReadResource(ctx, &sdkmcp.ReadResourceParams{URI: "skill://skill-authoring/SKILL.md"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "name: skill-authoring") {
		t.Errorf("read skill://skill-authoring/SKILL.md: %v %+v", err, rr)
	}
	for _, s := range sl.Skills {
		if len(s.Resources) == 0 || s.Resources[0].Size <= 0 || len(s.Resources[0].Digest) != len("sha256:")+64 {
			t.Errorf("%s resources = %+v", s.URI, s.Resources)
		}
	}
}

// TestToolAnnotations: base's tools carry the annotations and titles set
// with sdk.NewTool options, through describe and the registry to MCP;
// outputSchema comes from a typed result.
func TestToolAnnotations(t *testing.T) {
	t.Parallel()
	home := sharedHome(t)
	cs := connectAt(t, home, "2025-11-25", "probe,notes,base")
	res, err := cs.ListTools(context.Background(), nil)
	must(t, err)
	tools := map[string]*sdkmcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	tests := []struct {
		name                 string
		readOnly, idempotent bool
		destructive          bool
		openWorld            bool
	}{
		{"exec", false, false, true, true},
		{"shell_command", false, false, true, true},
		{"write_file", false, true, true, false},
		{"apply_patch", false, false, true, false},
		{"read_file", true, true, false, false},
		{"grep_files", true, true, false, false},
		{"list_dir", true, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := tools[tt.name]
			if tool == nil {
				t.Fatalf("no tool %s in %v", tt.name, res.Tools)
			}
			a := tool.Annotations
			if a == nil || tool.Title == "" || a.Title != tool.Title {
				t.Fatalf("%s: title %q annotations %+v", tt.name, tool.Title, a)
			}
			if a.ReadOnlyHint != tt.readOnly || a.IdempotentHint != tt.idempotent ||
				a.DestructiveHint == nil || *a.DestructiveHint != tt.destructive ||
				a.OpenWorldHint == nil || *a.OpenWorldHint != tt.openWorld {
				t.Errorf("%s annotations = %+v (destructive %v, open world %v)", tt.name, a, deref(a.DestructiveHint), deref(a.OpenWorldHint))
			}
		})
	}
	// The probe plugin's echo returns a struct: its schema travels from
	// the plugin through describe and the registry.
	if echo := tools["echo"]; echo == nil || echo.OutputSchema == nil {
		t.Errorf("echo has no outputSchema: %+v", echo)
	}
	if img := tools["image"]; img == nil || img.OutputSchema != nil {
		t.Errorf("image (bytes) must have no outputSchema: %+v", img)
	}
}

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}
