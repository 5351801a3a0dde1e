package plugbuild

import (
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/agentskills/agent/internal/isolation/sandbox"
)

// policy is one go build's sandbox (SPEC §8): it reads the system, the
// folders of PATH (the C toolchain, when the skill asks for cgo), the
// skill, GOROOT and the embedded SDK's proxy folder; it writes the
// output folder and its temp folder (its -modfile and TMPDIR); it reads,
// writes and renames in the module and build caches (go moves files
// into them); and it dials only the module proxy and checksum database
// hosts, through the sandbox's proxy. A file outside these, such as
// ~/.ssh/id_rsa named by a .S file's .incbin, cannot be read.
func (n Needs) policy(path string) sandbox.Policy {
	read := append(slices.Clone(sandbox.System), sandbox.PathDirs(path)...)
	read = append(read, n.Skill, n.GOROOT, n.Proxy)
	if n.SDK != "" {
		read = append(read, n.SDK)
	}
	return sandbox.Policy{
		Read:    read,
		Write:   []string{n.Out, n.Tmp},
		Move:    []string{n.GOMODCACHE, n.GOCACHE},
		Network: n.Hosts,
	}
}

// sandboxed starts go build in its sandbox; release, once it has
// exited, lets the thread that started it go (sandbox.Start).
func sandboxed(cmd *exec.Cmd, n Needs) (release func(), err error) {
	for _, d := range []string{n.GOMODCACHE, n.GOCACHE, n.Out} {
		if d != "" {
			// The sandbox grants folders that exist.
			_ = os.MkdirAll(d, 0o755)
		}
	}
	path := ""
	env := make([]string, 0, len(cmd.Env)+1)
	for _, kv := range cmd.Env {
		if strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "TMPDIR="+n.Tmp)
	return sandbox.Start(cmd, n.policy(path), (*exec.Cmd).Start)
}
