package workspace

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentskills/agent/plugins/base"
)

func TestBaseSkillNamedOnly(t *testing.T) {
	t.Parallel()
	home, root := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		skills string
		active bool
	}{
		{"all", false},
		{"all-untrusted", false},
		{"base", true},
		{"BASE,skill-authoring", true},
	} {
		ws, err := Load(context.Background(), Config{Home: home, Skills: tc.skills, Root: root, Executable: func() (string, error) { return "/bin/agent", nil }})
		if err != nil {
			t.Fatal(err)
		}
		tool, rerr := ws.Resolve("read_file")
		if ok := rerr == nil; ok != tc.active {
			t.Fatalf("AGENT_SKILLS=%s: read_file active = %v, want %v", tc.skills, ok, tc.active)
		}
		p, registered, err := ws.basePlugin()
		if err != nil || registered != tc.active {
			t.Fatalf("AGENT_SKILLS=%s: base plugin registered = %v (%v)", tc.skills, registered, err)
		}
		if !tc.active {
			continue
		}
		if tool.Skill != BaseSkill || tool.Plugin != BaseSkill || p.Name != BaseSkill {
			t.Errorf("read_file routes to %s/%s, plugin named %s", tool.Skill, tool.Plugin, p.Name)
		}
		if p.Path != "/bin/agent" || !slices.Equal(p.Args, []string{"__plugin", "base"}) || p.Dir != root {
			t.Errorf("plugin %+v, want /bin/agent __plugin base in the workspace", p)
		}
		var cfg base.Config
		for _, kv := range p.Env {
			if v, ok := strings.CutPrefix(kv, base.ConfigEnv+"="); ok {
				if err := json.Unmarshal([]byte(v), &cfg); err != nil {
					t.Fatal(err)
				}
			}
		}
		if cfg.Root != root || cfg.Home != home {
			t.Errorf("plugin config %+v, want root %s and home %s", cfg, root, home)
		}
	}
}

func TestBaseSkillUnresolvedSaysName(t *testing.T) {
	t.Parallel()
	ws, err := Load(context.Background(), Config{Home: t.TempDir(), Skills: "all"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ws.Resolve("apply_patch")
	if err == nil || !strings.Contains(err.Error(), "AGENT_SKILLS=base") || strings.Contains(err.Error(), "or AGENT_SKILLS=all") {
		t.Errorf("Resolve = %v, want the advice to name base", err)
	}
}

func TestWorkspaceRoot(t *testing.T) {
	t.Parallel()
	c := Config{Root: "rel"}
	got, err := c.WorkspaceRoot()
	if err != nil || !filepath.IsAbs(got) || filepath.Base(got) != "rel" {
		t.Errorf("WorkspaceRoot = %q, %v", got, err)
	}
}
