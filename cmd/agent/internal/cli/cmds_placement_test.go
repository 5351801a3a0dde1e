package cli_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdSameTree compares two folders file by file (names and contents),
// leaving out __pycache__: sametree <want> <got>.
func cmdSameTree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: sametree <want> <got>")
	}
	read := func(dir string) map[string]string {
		out := map[string]string{}
		root := ts.MkAbs(dir)
		ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				out[filepath.ToSlash(rel)] = string(data)
			}
			return nil
		}))
		return out
	}
	want, got := read(args[0]), read(args[1])
	same := len(want) == len(got) && len(want) > 0
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			same = false
			if !neg {
				ts.Logf("%s differs or is missing in %s", k, args[1])
			}
		}
	}
	if same == neg {
		ts.Fatalf("%s and %s: same=%v", args[0], args[1], same)
	}
}

// cmdReadOnly checks that no file or folder under a placement is writable
// by anyone: readonly <dir>.
func cmdReadOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readonly <dir>")
	}
	ts.Check(filepath.WalkDir(ts.MkAbs(args[0]), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o222 != 0 {
			ts.Fatalf("%s is writable (%v)", p, fi.Mode())
		}
		return nil
	}))
}

// clientsBin is where .ci/run's `npm ci` puts the pinned Gemini CLI and
// Claude Code (testdata/clients), which mcp_config_clients.txtar runs.
const clientsBin = "testdata/clients/node_modules/.bin"

// cmdApprove does what a user does once so that a client starts the
// project's MCP servers: approve <gemini|claude> <project>. Gemini CLI
// reads project settings only in a trusted folder
// (~/.gemini/trustedFolders.json); Claude Code starts a .mcp.json server
// once the project approved it (~/.claude.json, projects.<dir>).
func cmdApprove(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: approve <gemini|claude> <project>")
	}
	home := ts.Getenv("HOME")
	dir := ts.MkAbs(args[1])
	var file string
	edit := func(doc map[string]any) {}
	switch args[0] {
	case "gemini":
		file = filepath.Join(home, ".gemini", "trustedFolders.json")
		edit = func(doc map[string]any) { doc[dir] = "TRUST_FOLDER" }
	case "claude":
		file = filepath.Join(home, ".claude.json")
		edit = func(doc map[string]any) {
			projects, _ := doc["projects"].(map[string]any)
			if projects == nil {
				projects = map[string]any{}
			}
			projects[dir] = map[string]any{"enabledMcpjsonServers": []string{"agent"}, "hasTrustDialogAccepted": true}
			doc["projects"] = projects
		}
	default:
		ts.Fatalf("approve: unknown client %q", args[0])
	}
	doc := map[string]any{}
	if data, err := os.ReadFile(file); err == nil {
		ts.Check(json.Unmarshal(data, &doc))
	}
	edit(doc)
	data, err := json.Marshal(doc)
	ts.Check(err)
	ts.Check(os.MkdirAll(filepath.Dir(file), 0o755))
	ts.Check(os.WriteFile(file, data, 0o600))
}
