package mcp

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
)

func TestWriteConfig(t *testing.T) {
	t.Parallel()
	l := Launch{Command: "/opt/agent", Args: []string{"mcp"}, Env: map[string]string{"AGENT_SKILLS": "all"}}
	tests := []struct {
		name, client, old string
		keep              []string // text the result must still hold
	}{
		{"no file", "claude", "", nil},
		{"other servers and comments", "cursor", "{\n  // mine\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"} // trailing\n  },\n  \"x\": 1\n}\n",
			[]string{"// mine", `"other": {"command": "x"} // trailing`, `"x": 1`}},
		{"replace an old agent", "vscode", "{\n\t\"servers\": {\n\t\t\"agent\": {\"command\": \"/old/agent\"}\n\t}\n}\n", nil},
		{"no servers key", "gemini", "{\n  /* ui */\n  \"ui\": {\"theme\": \"GitHub\"}\n}\n", []string{"/* ui */", `"ui": {"theme": "GitHub"}`}},
		{"empty object", "gemini", "{}", nil},
		{"codex other tables", "codex", "# my codex\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n", []string{"# my codex", "[mcp_servers.other]"}},
		{"codex old agent", "codex", "[mcp_servers.agent]\ncommand = \"/old\"\n[mcp_servers.agent.env]\nA = \"1\"\n\n[profiles.x]\nmodel = \"y\"\n", []string{"[profiles.x]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			target, err := ConfigTargetOf(tt.client, dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.old != "" {
				os.MkdirAll(filepath.Dir(target.Path), 0o755)
				os.WriteFile(target.Path, []byte(tt.old), 0o600)
			}
			changed, backup, err := WriteConfig(tt.client, target, l)
			if err != nil || !changed {
				t.Fatalf("WriteConfig = %v, %v", changed, err)
			}
			if tt.old != "" {
				if b, _ := os.ReadFile(backup); string(b) != tt.old {
					t.Fatalf("backup %s holds %q", backup, b)
				}
			}
			got, _ := os.ReadFile(target.Path)
			for _, k := range tt.keep {
				if !strings.Contains(string(got), k) {
					t.Errorf("%q lost:\n%s", k, got)
				}
			}
			if fi, _ := os.Stat(target.Path); tt.old != "" && fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want the old file's 0600", fi.Mode())
			}
			// What the client reads: the server, once.
			if target.Key == "" {
				var doc struct {
					MCPServers map[string]struct {
						Command string
						Args    []string
						Env     map[string]string
					} `toml:"mcp_servers"`
				}
				if err := toml.Unmarshal(got, &doc); err != nil {
					t.Fatalf("%v:\n%s", err, got)
				}
				if a := doc.MCPServers["agent"]; a.Command != "/opt/agent" || a.Env["AGENT_SKILLS"] != "all" || len(a.Env) != 1 {
					t.Fatalf("agent = %+v\n%s", a, got)
				}
			} else {
				v, err := hujson.Parse(got)
				if err != nil {
					t.Fatalf("%v:\n%s", err, got)
				}
				if strings.Contains(string(got), ",}") || strings.Contains(string(got), ",\n}") {
					t.Fatalf("a trailing comma:\n%s", got)
				}
				a := v.Find("/" + target.Key + "/agent/command")
				if a == nil || string(a.Value.(hujson.Literal)) != `"/opt/agent"` {
					t.Fatalf("no agent server:\n%s", got)
				}
			}
			changed, _, err = WriteConfig(tt.client, target, l)
			if err != nil || changed {
				t.Fatalf("second WriteConfig = %v, %v; want no change", changed, err)
			}
			if again, _ := os.ReadFile(target.Path); string(again) != string(got) {
				t.Fatal("the second run rewrote the file")
			}
		})
	}
}

func TestWriteConfigRefusesBadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for client, bad := range map[string]string{"claude": "{\"mcpServers\": [", "codex": "[mcp_servers\n", "cursor": "[1, 2]"} {
		target, _ := ConfigTargetOf(client, dir, dir)
		os.MkdirAll(filepath.Dir(target.Path), 0o755)
		os.WriteFile(target.Path, []byte(bad), 0o644)
		if _, _, err := WriteConfig(client, target, Launch{Command: "a"}); err == nil || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("%s: err = %v", client, err)
		}
		if b, _ := os.ReadFile(target.Path); string(b) != bad {
			t.Errorf("%s: the bad file was changed", client)
		}
	}
}

func FuzzMergeJSON(f *testing.F) {
	f.Add([]byte("{\n  // c\n  \"mcpServers\": {\"a\": 1}\n}"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := mergeJSON(data, "mcpServers", map[string]any{"command": "x"})
		if err != nil {
			return
		}
		v, err := hujson.Parse(out)
		if err != nil {
			t.Fatalf("merged %q into %q, which does not parse: %v", data, out, err)
		}
		if v.Find("/mcpServers/agent/command") == nil {
			t.Fatalf("no agent in %q", out)
		}
	})
}

// TestHasServer: a placement registers the server only where no "agent"
// is; one the user wrote, in any client's format, counts.
func TestHasServer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, client, file string
		want               bool
		wantErr            bool
	}{
		{name: "no file", client: "claude", want: false},
		{name: "empty file", client: "claude", file: "\n", want: false},
		{name: "other servers", client: "cursor", file: `{"mcpServers": {"other": {"command": "x"}}}`, want: false},
		{name: "agent, with comments", client: "gemini", file: "{\n  // mine\n  \"mcpServers\": {\"agent\": {\"command\": \"agent\"},}\n}\n", want: true},
		{name: "vscode's key", client: "vscode", file: `{"servers": {"agent": {"command": "agent"}}}`, want: true},
		{name: "agent under another key", client: "vscode", file: `{"mcpServers": {"agent": {"command": "agent"}}}`, want: false},
		{name: "codex agent", client: "codex", file: "[mcp_servers.agent]\ncommand = \"agent\"\n", want: true},
		{name: "codex other", client: "codex", file: "[mcp_servers.other]\ncommand = \"x\"\n", want: false},
		{name: "broken JSON", client: "claude", file: `{"mcpServers": `, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target, err := ConfigTargetOf(tc.client, dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				if err := os.MkdirAll(filepath.Dir(target.Path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target.Path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := HasServer(target)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("HasServer = %v, %v; want %v (error: %v)", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestRemoveServer: the entry WriteConfig wrote goes, with nothing else;
// an entry the user changed stays.
func TestRemoveServer(t *testing.T) {
	t.Parallel()
	l := Launch{Command: "/bin/agent", Args: []string{"mcp"}, Env: map[string]string{"AGENT_SKILLS": "all"}}
	tests := []struct {
		name, client, file string
		mine               bool // the user's own entry: kept
	}{
		{name: "alone", client: "claude"},
		{name: "with another server and comments", client: "gemini", file: "{\n  // keep me\n  \"ui\": {\"theme\": \"GitHub\"},\n  \"mcpServers\": {\"other\": {\"command\": \"x\"}}\n}\n"},
		{name: "the user's own", client: "vscode", file: "{\"servers\": {\"agent\": {\"command\": \"agent\", \"args\": [\"mcp\"]}}}\n", mine: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			target, err := ConfigTargetOf(tc.client, dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			if tc.file != "" {
				if err := os.MkdirAll(filepath.Dir(target.Path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target.Path, []byte(tc.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.mine {
				if _, _, err := WriteConfig(tc.client, target, l); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := RemoveServer(tc.client, target, l)
			if err != nil {
				t.Fatal(err)
			}
			if changed == tc.mine {
				t.Errorf("RemoveServer changed = %v; want %v", changed, !tc.mine)
			}
			has, err := HasServer(target)
			if err != nil {
				t.Fatal(err)
			}
			if has != tc.mine {
				t.Errorf("after RemoveServer HasServer = %v; want %v", has, tc.mine)
			}
			got, _ := os.ReadFile(target.Path)
			for _, keep := range []string{"// keep me", `"other"`} {
				if strings.Contains(tc.file, keep) && !strings.Contains(string(got), keep) {
					t.Errorf("%q lost from\n%s", keep, got)
				}
			}
			// Gemini CLI's and VS Code's readers differ on trailing commas.
			if trailing := regexp.MustCompile(`,\s*[}\]]`); trailing.Match(got) {
				t.Errorf("a trailing comma after removal:\n%s", got)
			}
			if _, err := hujson.Parse(got); err != nil {
				t.Errorf("not JSON after removal: %v\n%s", err, got)
			}
		})
	}
}
