package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Clients are the MCP clients ClientConfig knows, in the order help lists
// them.
var Clients = []string{"claude", "cursor", "vscode", "codex", "gemini"}

// ErrUnknownClient: ClientConfig was asked for a client it does not know.
var ErrUnknownClient = errors.New("unknown MCP client")

// Launch is how a client starts the server.
type Launch struct {
	Command string            // absolute path of the agent binary
	Args    []string          // ["mcp"], plus "--lazy" and such
	Env     map[string]string // e.g. AGENT_SKILLS
}

// ClientConfig is the snippet that registers the server as "agent" in
// client, and where it goes.
func ClientConfig(client string, l Launch) (snippet, where string, err error) {
	server := map[string]any{"command": l.Command, "args": l.Args}
	if len(l.Env) > 0 {
		server["env"] = l.Env
	}
	switch client {
	case "claude":
		server["type"] = "stdio"
		return jsonSnippet(map[string]any{"mcpServers": map[string]any{"agent": server}}),
			".mcp.json in the project, or run: claude mcp add-json agent '<the \"agent\" object>' (never edit ~/.claude.json: a running Claude Code rewrites it)", nil
	case "cursor":
		return jsonSnippet(map[string]any{"mcpServers": map[string]any{"agent": server}}),
			"~/.cursor/mcp.json (or .cursor/mcp.json in the project)", nil
	case "vscode":
		server["type"] = "stdio"
		return jsonSnippet(map[string]any{"servers": map[string]any{"agent": server}}),
			".vscode/mcp.json in the workspace", nil
	case "codex":
		return codexTOML(l), "~/.codex/config.toml", nil
	case "gemini":
		return jsonSnippet(map[string]any{"mcpServers": map[string]any{"agent": server}}),
			".gemini/settings.json in the project (a trusted folder) or ~/.gemini/settings.json", nil
	}
	return "", "", fmt.Errorf("%w %q; choose one of %s", ErrUnknownClient, client, strings.Join(Clients, ", "))
}

// NextStep is the one-time approval that client asks of its user before
// it starts a server registered in project's configuration, and how to
// see that it did; "" for a client that asks none. Each follows the
// client's own documentation, and mcp_config_clients.txtar applies the
// approvals for the pinned Claude Code and Gemini CLI. project "" is the
// current folder.
func NextStep(client, project string) string {
	if project == "" {
		project = "this folder"
	}
	switch client {
	case "claude":
		return fmt.Sprintf("Claude Code asks once before it starts a server from a project's .mcp.json: until then 'claude mcp list' shows agent as Pending approval. Start 'claude' in %s and approve \"agent\" (or approve it under /mcp); then 'claude mcp list' there shows agent ✔ Connected", project)
	case "gemini":
		return fmt.Sprintf("Gemini CLI reads a project's .gemini/settings.json only in a trusted folder: start 'gemini' in %s and choose Trust folder (kept in ~/.gemini/trustedFolders.json); then 'gemini mcp list' there shows agent Connected", project)
	case "vscode":
		return "VS Code asks once before it starts a server from .vscode/mcp.json: open the file and choose Start above \"agent\", then trust it"
	case "cursor":
		return "Cursor lists the server under Cursor Settings > MCP; turn \"agent\" on there if it is off"
	}
	return ""
}

func jsonSnippet(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b) + "\n"
}

// codexTOML writes the [mcp_servers.agent] table; strconv.Quote's escapes
// are valid TOML basic strings for the paths and names used here.
func codexTOML(l Launch) string {
	var b strings.Builder
	b.WriteString("[mcp_servers.agent]\n")
	fmt.Fprintf(&b, "command = %s\n", strconv.Quote(l.Command))
	args := make([]string, len(l.Args))
	for i, a := range l.Args {
		args[i] = strconv.Quote(a)
	}
	fmt.Fprintf(&b, "args = [%s]\n", strings.Join(args, ", "))
	if len(l.Env) > 0 {
		keys := make([]string, 0, len(l.Env))
		for k := range l.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, fmt.Sprintf("%s = %s", k, strconv.Quote(l.Env[k])))
		}
		fmt.Fprintf(&b, "env = { %s }\n", strings.Join(kv, ", "))
	}
	return b.String()
}
