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

// skillsClientDir pins @modelcontextprotocol/client, whose ext/skills
// SkillsClient is the reference client of the skills extension; `npm ci`
// there (done by .ci/run, or by the test when node_modules is missing)
// installs it. check.mjs drives it.
const skillsClientDir = "testdata/skillsclient"

var (
	skillsClientOnce sync.Once
	skillsClientWhy  string // why the client is not available
)

func skillsClient(t *testing.T) (node string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed (.ci/run installs nodejs and npm from Debian)")
	}
	skillsClientOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(skillsClientDir, "node_modules", "@modelcontextprotocol", "client", "package.json")); err == nil {
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			skillsClientWhy = "npm is not installed (.ci/run installs nodejs and npm from Debian)"
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = skillsClientDir
		if out, err := cmd.CombinedOutput(); err != nil {
			skillsClientWhy = "npm ci could not install the pinned @modelcontextprotocol/client (is the npm registry reachable?): " + err.Error() + "\n" + string(out)
		}
	})
	if skillsClientWhy != "" {
		t.Skip("reference skills client unavailable: " + skillsClientWhy)
	}
	return node
}

type skillsReport struct {
	Supported     bool    `json:"supported"`
	DirectoryRead bool    `json:"directoryRead"`
	TTLMs         float64 `json:"ttlMs"`
	CacheScope    string  `json:"cacheScope"`
	Invalid       []any   `json:"invalid"`
	Skills        []struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		GetEqual    bool           `json:"getEqual"`
		Body        string         `json:"body"`
		Files       map[string]struct {
			Size     int    `json:"size"`
			Verified bool   `json:"verified"`
			MIMEType string `json:"mimeType"`
		} `json:"files"`
		Directories map[string][]struct {
			URI      string `json:"uri"`
			Name     string `json:"name"`
			MIMEType string `json:"mimeType"`
		} `json:"directories"`
	} `json:"skills"`
	Unknown struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"unknown"`
	NotDirectory struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"notDirectory"`
}

// TestSkillsClient serves the active skills to the reference skills
// client over stdio. The client itself refuses an invalid entry, and any
// file whose size, digest or frontmatter differs from its entry; the test
// checks that it read every file of every skill, walked every folder, and
// got -32602 for an unknown skill and for a file read as a folder.
func TestSkillsClient(t *testing.T) {
	t.Parallel()
	node := skillsClient(t)
	home := sharedHome(t)
	// Python's bytecode cache beside a script is never part of a skill.
	pyc := filepath.Join(home, "skills", "probe", "scripts", "__pycache__")
	if err := os.MkdirAll(pyc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pyc, "hello.cpython-311.pyc"), []byte("\x00bytecode"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	serverEnv, _ := json.Marshal(map[string]string{"AGENT_HOME": home, "AGENT_SKILLS": "all", "PATH": os.Getenv("PATH")})
	cmd := exec.CommandContext(ctx, node, "check.mjs", agentBin, "mcp")
	cmd.Dir = skillsClientDir
	cmd.Env = append(os.Environ(), "SERVER_ENV="+string(serverEnv))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("check.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var r skillsReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("check.mjs printed %q: %v", stdout.String(), err)
	}
	if !r.Supported || !r.DirectoryRead {
		t.Errorf("the client did not see the extension with directoryRead: %+v", r)
	}
	if r.TTLMs <= 0 || r.CacheScope == "" || len(r.Invalid) != 0 {
		t.Errorf("listing: ttlMs %v, cacheScope %q, invalid %v", r.TTLMs, r.CacheScope, r.Invalid)
	}
	var uris []string
	for _, s := range r.Skills {
		uris = append(uris, s.URI)
	}
	if want := []string{"skill://notes/SKILL.md", "skill://probe/SKILL.md", "skill://skill-authoring/SKILL.md"}; !slices.Equal(uris, want) {
		t.Fatalf("skills = %v, want %v", uris, want)
	}
	for _, s := range r.Skills {
		name := strings.TrimSuffix(strings.TrimPrefix(s.URI, "skill://"), "/SKILL.md")
		if !s.GetEqual {
			t.Errorf("%s: skills/get differs from the listing's entry", name)
		}
		if s.Frontmatter["name"] != name {
			t.Errorf("%s: frontmatter = %v", name, s.Frontmatter)
		}
		dir := filepath.Join(home, "skills", name)
		if name == "skill-authoring" { // bundled: served from its copy
			dir = filepath.Join(home, "state", "bundled", name)
		}
		var onDisk []string
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if d != nil && d.IsDir() && d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			if err == nil && d.Type().IsRegular() {
				rel, _ := filepath.Rel(dir, p)
				onDisk = append(onDisk, "skill://"+name+"/"+filepath.ToSlash(rel))
			}
			return nil
		})
		var read []string
		for uri, f := range s.Files {
			read = append(read, uri)
			if !f.Verified {
				t.Errorf("%s was read unverified", uri)
			}
		}
		slices.Sort(read)
		slices.Sort(onDisk)
		if !slices.Equal(read, onDisk) {
			t.Errorf("%s: read %v, the folder holds %v", name, read, onDisk)
		}
		if f := s.Files[s.URI]; f.MIMEType != "text/markdown" {
			t.Errorf("%s: SKILL.md served as %q", name, f.MIMEType)
		}
		// Every folder was walked; each listed file is one of the skill's.
		var listed []string
		for dirURI, children := range s.Directories {
			for _, c := range children {
				if !strings.HasPrefix(c.URI, dirURI+"/") || c.URI[len(dirURI)+1:] != c.Name {
					t.Errorf("%s lists %s named %q", dirURI, c.URI, c.Name)
				}
				if c.MIMEType == "inode/directory" {
					if _, walked := s.Directories[c.URI]; !walked {
						t.Errorf("folder %s was not read", c.URI)
					}
					continue
				}
				listed = append(listed, c.URI)
			}
		}
		slices.Sort(listed)
		if !slices.Equal(listed, onDisk) {
			t.Errorf("%s: folders list %v, the folder holds %v", name, listed, onDisk)
		}
	}
	// YAML 1.2: a date is a string (yaml.v3 alone makes it a timestamp).
	if md, _ := r.Skills[0].Frontmatter["metadata"].(map[string]any); md["released"] != "2024-01-02" {
		t.Errorf("notes frontmatter = %v", r.Skills[0].Frontmatter)
	}
	probe := r.Skills[1]
	if f := probe.Files["skill://probe/plugin/go.mod"]; f.MIMEType != "text/plain" {
		t.Errorf("go.mod served as %q", f.MIMEType)
	}
	if !strings.Contains(probe.Body, "Probe $ARGUMENTS[0]") {
		t.Errorf("probe body = %q", probe.Body)
	}
	if _, ok := probe.Files["skill://probe/scripts/__pycache__/hello.cpython-311.pyc"]; ok {
		t.Error("__pycache__ is listed")
	}
	if r.Unknown.Code != -32602 {
		t.Errorf("skills/get of an unknown skill: %+v, want code -32602", r.Unknown)
	}
	if r.NotDirectory.Code != -32602 {
		t.Errorf("resources/directory/read of SKILL.md: %+v, want code -32602", r.NotDirectory)
	}
}
