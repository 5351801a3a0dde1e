package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry"
)

// RemoveState deletes what $AGENT_HOME/state keeps about a skill that is
// being removed: the exec plugin's cached help of its scripts and the
// host's fingerprints of binaries inside the skill or its built plugin. Call it before the skill's
// folder goes: the help cache is keyed by each script's contents. Caches
// only: an error leaves stale entries, never a broken skill.
func RemoveState(home string, e registry.Entry) error {
	state := filepath.Join(home, "state")
	var errs []error
	if e.Path != "" {
		if m, _, err := registry.LoadInstalled(e); err == nil {
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
	if err := host.RemoveFingerprints(state, roots...); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove state of %s: %w", e.Canonical, err)
	}
	return nil
}
