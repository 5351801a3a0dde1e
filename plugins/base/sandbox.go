package base

import (
	"os"
	"strings"

	"github.com/agentskills/agent/internal/isolation/sandbox"
)

// confine gives a command its sandbox (SPEC §8, §12): it reads the
// system, the folders of its PATH and the workspace; it writes the
// workspace and a temp folder of its own (its TMPDIR, removed by
// cleanup); it has no network unless Config.Network says "*".
func (s *service) confine(env []string) ([]string, *sandbox.Policy, func(), error) {
	if s.cfg.NoSandbox {
		return env, nil, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "agent-cmd-")
	if err != nil {
		return nil, nil, nil, errorf(CodeExecutionFailed, "create the command's temp folder: %v", err)
	}
	out := make([]string, 0, len(env)+1)
	path := ""
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
		out = append(out, kv)
	}
	out = append(out, "TMPDIR="+tmp)
	pol := &sandbox.Policy{
		Read:    append(append(append([]string{}, sandbox.System...), sandbox.PathDirs(path)...), s.cfg.Root),
		Write:   []string{s.cfg.Root, tmp},
		Network: s.cfg.Network,
	}
	return out, pol, func() { _ = os.RemoveAll(tmp) }, nil
}
