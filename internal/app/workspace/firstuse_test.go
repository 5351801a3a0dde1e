package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/manifest"
	"github.com/agentskills/agent/sdk"
)

// installedSkill writes a skill folder under home/skills/<name> and returns
// an active skill whose entry records the folder's h1 hash, as add does.
func installedSkill(t *testing.T, home, name string, trusted bool) *ActiveSkill {
	t.Helper()
	dir := filepath.Join(home, "skills", name)
	for p, content := range map[string]string{
		"SKILL.md":       "---\nname: " + name + "\ndescription: d\n---\nbody\n",
		"scripts/run.py": "print('{}')\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h1, _, err := registry.HashSkill(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := registry.Entry{
		Name:      name,
		Canonical: name,
		Trusted:   trusted,
		Path:      dir,
		Plugin:    &registry.Plugin{Path: "/nonexistent"},
		Tools:     []registry.Tool{{Name: name + "_tool"}},
		Origin:    registry.Origin{Source: registry.SourceGit},
		Integrity: registry.Integrity{DirHash: h1},
	}
	return &ActiveSkill{Entry: &e, Manifest: &manifest.Manifest{Name: name, Description: "d"}}
}

func TestBeforeInvoke(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	trusted := installedSkill(t, home, "good", true)
	untrusted := installedSkill(t, home, "stranger", false)
	tampered := installedSkill(t, home, "edited", true)
	ws, err := New(Config{Home: home}, nil, []*ActiveSkill{trusted, untrusted, tampered})
	if err != nil {
		t.Fatal(err)
	}
	// A first check records the per-file sums, as add does.
	if err := ws.Config.Store().CheckIntegrity(*tampered.Entry); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tampered.Entry.Path, "scripts", "run.py"), []byte("evil"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := &ToolRef{Name: "script_run", Skill: ExecSkill, Plugin: ExecPlugin}
	list := &ToolRef{Name: "script_list", Skill: ExecSkill, Plugin: ExecPlugin}
	plugin := func(as *ActiveSkill) *ToolRef {
		return &ToolRef{Name: as.Entry.Canonical + "_tool", Skill: as.Entry.Canonical, Plugin: as.Entry.Canonical}
	}
	args := func(skill string) json.RawMessage {
		return json.RawMessage(`{"skill_name":"` + skill + `","script_name":"run"}`)
	}
	for _, tc := range []struct {
		name     string
		tool     *ToolRef
		args     json.RawMessage
		wantCode string // "" means allowed
		wantMsg  string
	}{
		{"trusted script", script, args("good"), "", ""},
		{"trusted plugin", plugin(trusted), nil, "", ""},
		{"untrusted script", script, args("stranger"), CodePermissionDenied, "agent skill trust stranger"},
		{"untrusted plugin", plugin(untrusted), nil, CodePermissionDenied, "agent skill trust stranger"},
		{"tampered script", script, args("edited"), CodeSkillTampered, "scripts/run.py (changed)"},
		{"tampered plugin", plugin(tampered), nil, CodeSkillTampered, "agent skill verify edited"},
		{"script_list lists only", list, json.RawMessage(`{"skill_name":"edited"}`), "", ""},
		{"unknown skill left to the plugin", script, args("ghost"), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ws.beforeInvoke(context.Background(), tc.tool, tc.args)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("beforeInvoke = %v; want allowed", err)
				}
				return
			}
			var se *sdk.Error
			if !errors.As(err, &se) || se.Code != tc.wantCode || !strings.Contains(se.Message, tc.wantMsg) {
				t.Fatalf("beforeInvoke = %v; want %s mentioning %q", err, tc.wantCode, tc.wantMsg)
			}
		})
	}
	// Reading files (use_skill, CheckFiles for a resource read) needs no
	// trust, but the files must be as installed.
	if err := ws.CheckFiles("stranger"); err != nil {
		t.Errorf("CheckFiles(stranger) = %v", err)
	}
	if err := ws.CheckFiles("edited"); !errors.As(err, new(*sdk.Error)) || !strings.Contains(err.Error(), "scripts/run.py") {
		t.Errorf("CheckFiles(edited) = %v", err)
	}
	if _, err := useSkill(context.Background(), ws, json.RawMessage(`{"skill":"stranger"}`)); err != nil {
		t.Errorf("use_skill of an untrusted skill = %v", err)
	}
	var se *sdk.Error
	if _, err := useSkill(context.Background(), ws, json.RawMessage(`{"skill":"edited"}`)); !errors.As(err, &se) || se.Code != CodeSkillTampered {
		t.Errorf("use_skill of a tampered skill = %v", err)
	}
}
