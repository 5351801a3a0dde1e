package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/lazyregexp"
)

// ErrConfigFile: a client's configuration file cannot be read as its
// format; it is left as it is.
var ErrConfigFile = errors.New("client configuration unreadable")

// ConfigTarget is the file `agent mcp config <client> --write` edits.
type ConfigTarget struct {
	Path string
	// Key is the JSON object holding the servers ("mcpServers",
	// "servers"); empty for codex's TOML.
	Key string
}

// ConfigTargetOf says where a client reads the server from: the project's
// file (claude's .mcp.json, not ~/.claude.json, which a running Claude
// Code rewrites; .cursor/mcp.json; .vscode/mcp.json;
// .gemini/settings.json), or codex's ~/.codex/config.toml.
func ConfigTargetOf(client, project, home string) (ConfigTarget, error) {
	switch client {
	case "claude":
		return ConfigTarget{Path: filepath.Join(project, ".mcp.json"), Key: "mcpServers"}, nil
	case "cursor":
		return ConfigTarget{Path: filepath.Join(project, ".cursor", "mcp.json"), Key: "mcpServers"}, nil
	case "vscode":
		return ConfigTarget{Path: filepath.Join(project, ".vscode", "mcp.json"), Key: "servers"}, nil
	case "gemini":
		return ConfigTarget{Path: filepath.Join(project, ".gemini", "settings.json"), Key: "mcpServers"}, nil
	case "codex":
		return ConfigTarget{Path: filepath.Join(home, ".codex", "config.toml")}, nil
	}
	return ConfigTarget{}, fmt.Errorf("%w %q; choose one of %s", ErrUnknownClient, client, strings.Join(Clients, ", "))
}

// serverObject is the "agent" entry of a JSON client configuration.
func serverObject(client string, l Launch) map[string]any {
	server := map[string]any{"command": l.Command, "args": l.Args}
	if len(l.Env) > 0 {
		server["env"] = l.Env
	}
	if client == "claude" || client == "vscode" {
		server["type"] = "stdio"
	}
	return server
}

// WriteConfig registers the server as "agent" in the client's file: other
// keys, comments and formatting are kept, a file that already says the
// same is not touched, and the old file is kept as <file>.bak before it
// is replaced. It returns whether the file changed and the backup's path
// ("" when there was no file before).
func WriteConfig(client string, t ConfigTarget, l Launch) (changed bool, backup string, err error) {
	old, err := os.ReadFile(t.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, "", fmt.Errorf("read %s: %w", t.Path, err)
	}
	existed := err == nil
	var next []byte
	if t.Key == "" {
		next, err = mergeTOML(old, l)
	} else {
		next, err = mergeJSON(old, t.Key, serverObject(client, l))
	}
	if err != nil {
		return false, "", fmt.Errorf("%s: %w", t.Path, err)
	}
	if existed && bytes.Equal(old, next) {
		return false, "", nil
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
		return false, "", err
	}
	mode := fs.FileMode(0o644)
	if existed {
		if fi, err := os.Stat(t.Path); err == nil {
			mode = fi.Mode().Perm()
		}
		backup = t.Path + ".bak"
		if err := atomicfile.Write(backup, old, mode, atomicfile.Sync()); err != nil {
			return false, "", fmt.Errorf("back up %s: %w", t.Path, err)
		}
	}
	if err := atomicfile.Write(t.Path, next, mode, atomicfile.Sync()); err != nil {
		return false, backup, fmt.Errorf("write %s: %w", t.Path, err)
	}
	return true, backup, nil
}

// mergeJSON sets <key>.agent in a JSON (or JSON with comments) document.
// It splices text at the parsed offsets, so that everything else (other
// keys, comments, formatting) stays byte for byte, and writes plain JSON:
// no trailing commas, which Gemini CLI and VS Code's JSON readers differ on.
func mergeJSON(old []byte, key string, server map[string]any) ([]byte, error) {
	if len(bytes.TrimSpace(old)) == 0 {
		old = []byte("{}\n")
	}
	v, err := hujson.Parse(old)
	if err != nil {
		return nil, fmt.Errorf("%w: %v; fix it or move it away, then run again (nothing was written)", ErrConfigFile, err)
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: the top level is not a JSON object; fix it or move it away (nothing was written)", ErrConfigFile)
	}
	unit := indentUnit(old)
	value := func(depth int) string {
		b, _ := json.MarshalIndent(server, strings.Repeat(unit, depth), unit)
		return string(b)
	}
	splice := func(at, end int, text string) []byte {
		out := append([]byte(nil), old[:at]...)
		out = append(out, text...)
		return append(out, old[end:]...)
	}
	servers := v.Find("/" + key)
	if servers == nil {
		text := "\n" + unit + strconvQuote(key) + ": {\n" + unit + unit + `"agent": ` + value(2) + "\n" + unit + "}"
		if len(root.Members) > 0 {
			text += ","
		} else {
			text += "\n"
		}
		return splice(v.StartOffset+1, v.StartOffset+1, text), nil
	}
	obj, ok := servers.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("%w: %q is not an object; fix it or move it away (nothing was written)", ErrConfigFile, key)
	}
	want, _ := json.Marshal(server)
	if cur := v.Find("/" + key + "/agent"); cur != nil {
		std := cur.Clone()
		std.Standardize()
		var got any
		if json.Unmarshal(std.Pack(), &got) == nil {
			if g, _ := json.Marshal(got); bytes.Equal(g, want) {
				return old, nil // already registered, as is
			}
		}
		return splice(cur.StartOffset, cur.EndOffset, value(lineDepth(old, cur.StartOffset, unit))), nil
	}
	depth := lineDepth(old, servers.StartOffset, unit) + 1
	text := "\n" + strings.Repeat(unit, depth) + `"agent": ` + value(depth)
	if len(obj.Members) > 0 {
		text += ","
	} else {
		text += "\n" + strings.Repeat(unit, depth-1)
	}
	return splice(servers.StartOffset+1, servers.StartOffset+1, text), nil
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// indentUnit is the indentation of the first indented line (a tab or some
// spaces), two spaces when nothing is indented.
func indentUnit(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed != line && trimmed != "" {
			ws := line[:len(line)-len(trimmed)]
			if ws[0] == '\t' {
				return "\t"
			}
			return ws
		}
	}
	return "  "
}

// lineDepth is how many indent units start the line holding offset at.
func lineDepth(b []byte, at int, unit string) int {
	start := bytes.LastIndexByte(b[:at], '\n') + 1
	line := string(b[start:at])
	ws := line[:len(line)-len(strings.TrimLeft(line, " \t"))]
	return strings.Count(ws, unit)
}

var tomlHeaderRE = lazyregexp.New(`^\s*\[`)

// mergeTOML replaces the [mcp_servers.agent] table (and its sub-tables)
// in codex's config.toml, or appends it, keeping every other line,
// comments included.
func mergeTOML(old []byte, l Launch) ([]byte, error) {
	var probe map[string]any
	if err := toml.Unmarshal(old, &probe); err != nil {
		return nil, fmt.Errorf("%w: %v; fix it or move it away, then run again (nothing was written)", ErrConfigFile, err)
	}
	table := codexTOML(l)
	lines := strings.SplitAfter(string(old), "\n")
	var out []string
	in, done := false, false
	for _, line := range lines {
		if tomlHeaderRE.MatchString(line) {
			h := strings.TrimSpace(line)
			mine := h == "[mcp_servers.agent]" || strings.HasPrefix(h, "[mcp_servers.agent.")
			if mine && !done {
				out = append(out, table)
				done = true
			}
			in = mine
		}
		if !in {
			out = append(out, line)
		}
	}
	s := strings.Join(out, "")
	if !done {
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			s += "\n"
		}
		s += table
	}
	var check map[string]any
	if err := toml.Unmarshal([]byte(s), &check); err != nil {
		return nil, fmt.Errorf("%w: the merged file would not be valid TOML (%v); nothing was written", ErrConfigFile, err)
	}
	return []byte(s), nil
}

// HasServer reports whether the client's file already registers a server
// named "agent", however it is configured. A placement registers the
// server only where none is (SPEC §19): an entry the user wrote, with the
// AGENT_SKILLS they chose, is theirs. A missing file has none.
func HasServer(t ConfigTarget) (bool, error) {
	b, err := os.ReadFile(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", t.Path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return false, nil
	}
	if t.Key == "" {
		var doc struct {
			Servers map[string]any `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal(b, &doc); err != nil {
			return false, fmt.Errorf("%s: %w: %v", t.Path, ErrConfigFile, err)
		}
		_, ok := doc.Servers["agent"]
		return ok, nil
	}
	v, err := hujson.Parse(b)
	if err != nil {
		return false, fmt.Errorf("%s: %w: %v", t.Path, ErrConfigFile, err)
	}
	return v.Find("/"+t.Key+"/agent") != nil, nil
}

// RemoveServer takes the server "agent" out of a project's JSON client
// file when it is exactly the entry WriteConfig writes for l, so that an
// entry the user wrote or changed is never touched. It reports whether
// the file changed; the old file is kept as <file>.bak. codex's file is
// the user's, shared by every project, and is left alone.
func RemoveServer(client string, t ConfigTarget, l Launch) (bool, error) {
	if t.Key == "" {
		return false, nil
	}
	old, err := os.ReadFile(t.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", t.Path, err)
	}
	v, err := hujson.Parse(old)
	if err != nil {
		return false, fmt.Errorf("%s: %w: %v", t.Path, ErrConfigFile, err)
	}
	cur := v.Find("/" + t.Key + "/agent")
	if cur == nil {
		return false, nil
	}
	std := cur.Clone()
	std.Standardize()
	var got any
	if json.Unmarshal(std.Pack(), &got) != nil {
		return false, nil
	}
	g, _ := json.Marshal(got)
	want, _ := json.Marshal(serverObject(client, l))
	if !bytes.Equal(g, want) {
		return false, nil
	}
	if err := v.Patch([]byte(`[{"op":"remove","path":"/` + t.Key + `/agent"}]`)); err != nil {
		return false, fmt.Errorf("%s: %w", t.Path, err)
	}
	next := v.Pack()
	fi, err := os.Stat(t.Path)
	if err != nil {
		return false, err
	}
	if err := atomicfile.Write(t.Path+".bak", old, fi.Mode().Perm(), atomicfile.Sync()); err != nil {
		return false, fmt.Errorf("back up %s: %w", t.Path, err)
	}
	if err := atomicfile.Write(t.Path, next, fi.Mode().Perm(), atomicfile.Sync()); err != nil {
		return false, fmt.Errorf("write %s: %w", t.Path, err)
	}
	return true, nil
}
