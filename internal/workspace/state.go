package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
)

// RemoveState deletes what $AGENT_HOME/state keeps about a skill that is
// being removed: the exec plugin's cached help of its scripts and the
// host's records about files inside the skill or its built plugin (any
// state/*/*.json whose "path" lies there). Call it before the skill's
// folder goes: the help cache is keyed by each script's contents. Caches
// only: an error leaves stale entries, never a broken skill.
func RemoveState(home string, e registry.Entry) error {
	state := filepath.Join(home, "state")
	var errs []error
	if e.Path != "" {
		if m, _, err := LoadManifest(e); err == nil {
			scripts, _ := exec.List(e.Path, m.Scripts, m.ScriptsIgnore)
			for _, s := range scripts {
				if f, err := exec.HelpCacheFile(filepath.Join(state, "exec"), s.Path); err == nil {
					if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
						errs = append(errs, err)
					}
				}
			}
		}
	}
	var roots []string
	if e.Path != "" {
		roots = append(roots, e.Path)
	}
	if e.Plugin != nil && e.Plugin.Path != "" {
		roots = append(roots, filepath.Dir(e.Plugin.Path))
	}
	records, _ := filepath.Glob(filepath.Join(state, "*", "*.json"))
	for _, r := range records {
		b, err := os.ReadFile(r)
		if err != nil {
			continue
		}
		var rec struct {
			Path string `json:"path"`
		}
		if json.Unmarshal(b, &rec) != nil || rec.Path == "" {
			continue
		}
		for _, root := range roots {
			if inside(root, rec.Path) {
				if err := os.Remove(r); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
				break
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove state of %s: %w", e.Canonical, err)
	}
	return nil
}

func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
