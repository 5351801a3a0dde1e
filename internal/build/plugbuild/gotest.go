package plugbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentskills/agent/internal/build/sdkmod"
)

// Test runs `go test ./...` in the module of a skill's plugin (rel, the
// plugin.build package) as Build builds it: against the embedded SDK,
// with the same -modfile and in the same sandbox, so that the plugin's
// tests reach no more than its build. It returns go test's output; a
// failure is a *BuildError (the output is in it too).
func Test(ctx context.Context, opts Options, skillDir, rel string) (string, error) {
	clean, err := Package(rel)
	if err != nil {
		return "", err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", ErrGoMissing
	}
	skillDir = filepath.Clean(skillDir)
	root, err := ModuleRoot(skillDir, filepath.Join(skillDir, clean))
	if err != nil {
		return "", err
	}
	proxy := ProxyDir(opts.Home)
	if err := sdkmod.WriteProxy(proxy); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp("", "agent-plugtest-")
	if err != nil {
		return "", fmt.Errorf("test plugin: %w", err)
	}
	defer os.RemoveAll(tmp)
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env, goenv, err := buildEnv(ctx, goBin, environ, proxy, opts.CGO)
	if err != nil {
		return "", err
	}
	// A test that builds its plugin (sdktest.Build runs go build) would
	// stamp VCS data, and the sandbox keeps it out of an enclosing
	// repository's .git: "error obtaining VCS status".
	env = append(env, strings.TrimSpace("GOFLAGS="+goenv.flags+" -buildvcs=false"))
	var dirs map[string]string
	if goenv.direct {
		if dirs, err = sdkmod.Extract(filepath.Join(opts.Home, "cache", "sdk")); err != nil {
			return "", err
		}
	}
	modPath := filepath.Join(tmp, "go.mod")
	if err := writeModfile(root, modPath, dirs); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, goBin, "test", "-modfile="+modPath, "-mod=mod", "-buildvcs=false", "-count=1", "./...")
	cmd.Dir = root
	cmd.Env = env
	// Out is the system's temp folder: a test that starts its plugin with
	// sdktest hands it an environment without TMPDIR, and go-plugin
	// makes its socket in /tmp then. The tests write there and in their
	// own temp folder, nowhere else.
	needs := Needs{Skill: skillDir, GOROOT: goenv.goroot, GOMODCACHE: goenv.modcache, GOCACHE: goenv.cache,
		Out: "/tmp", Tmp: tmp, Proxy: proxy,
		// The host's network: a test that starts its plugin (sdktest)
		// connects to the plugin's Unix socket, which the sandbox's
		// seccomp filter refuses code without it. Files stay confined.
		Hosts: []string{"*"}}
	if goenv.direct {
		needs.SDK = filepath.Join(opts.Home, "cache", "sdk")
	}
	output, err := runConfined(opts, cmd, needs)
	if err != nil {
		if ctx.Err() != nil {
			return output, ctx.Err()
		}
		return output, &BuildError{Err: err, Output: output}
	}
	return output, nil
}
