package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/sdk"
)

// Errors of the install step; their advice lives in errors.go.
var (
	errBuildFailed   = errors.New("plugin build failed")
	errGoMissing     = errors.New("go toolchain not found")
	errBadPluginPath = errors.New("bad plugin command")
	errDescribe      = errors.New("plugin did not describe its tools")
)

// describeTimeout bounds the one-shot Describe at install time: a plugin
// that never completes the handshake must not hang `agent skill add`.
const describeTimeout = 30 * time.Second

// installer is the Prepare step of add and update: it turns a staged clone
// into a verified plugin binary plus its cached tool list, so that the
// registry stays ignorant of the host.
type installer struct {
	// goBuild runs `go build -trimpath -o out pkg` in dir and returns the
	// compiler's combined output. A seam so tests can count builds.
	goBuild func(ctx context.Context, dir, out, pkg string) ([]byte, error)
	// describe asks a plugin binary for its tools (host.Describe).
	describe func(ctx context.Context, p host.Plugin) ([]sdk.ToolInfo, error)
	// environ is the agent's own environment, filtered per skill.
	environ func() []string
}

func newInstaller(environ func() []string, logger hclog.Logger) *installer {
	return &installer{
		goBuild: runGoBuild,
		describe: func(ctx context.Context, p host.Plugin) ([]sdk.ToolInfo, error) {
			return host.Describe(ctx, p, host.WithLogger(logger))
		},
		environ: environ,
	}
}

func runGoBuild(ctx context.Context, dir, out, pkg string) ([]byte, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, errGoMissing
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.SysProcAttr = childProcAttr()
	// On cancel (Ctrl-C) stop the whole build, compiler processes included.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd.CombinedOutput()
}

// prepare builds or locates the skill's plugin, hashes it and describes its
// tools. It is called by registry.Add and registry.Update on the staged copy.
func (in *installer) prepare(ctx context.Context, s *registry.Staged) error {
	m := s.Manifest
	if m != nil {
		s.Runnable = workspace.RunnableScripts(s.SkillDir, m) // listed, never run
	}
	if m == nil || m.Plugin == nil {
		return nil
	}
	var bin string
	switch {
	case m.Plugin.Build != "":
		pkg, err := buildPackage(m.Plugin.Build)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(s.PluginOut), 0o755); err != nil {
			return fmt.Errorf("build plugin of %s: %w", m.Name, err)
		}
		out, err := in.goBuild(ctx, s.SkillDir, s.PluginOut, pkg)
		if err != nil {
			if errors.Is(err, errGoMissing) {
				return fmt.Errorf("build plugin %s of %s: %w", pkg, m.Name, errGoMissing)
			}
			return fmt.Errorf("build plugin %s of %s: %w (%v)\n%s", pkg, m.Name, errBuildFailed, err, indentText(string(out), "    "))
		}
		bin = s.PluginOut
	case m.Plugin.Command != "":
		p, err := commandPath(s.SkillDir, m.Plugin.Command)
		if err != nil {
			return err
		}
		bin = p
	default:
		return nil
	}
	sum, err := sha256File(bin)
	if err != nil {
		return fmt.Errorf("hash plugin of %s: %w", m.Name, err)
	}
	dctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	infos, err := in.describe(dctx, host.Plugin{
		Name:   s.Canonical,
		Path:   bin,
		SHA256: sum,
		Env:    host.FilterEnv(in.environ(), m.Permissions.Env),
		Dir:    s.SkillDir,
	})
	if err != nil {
		return fmt.Errorf("describe plugin of %s: %w: %w", m.Name, errDescribe, err)
	}
	s.Plugin = &registry.Plugin{Path: bin, SHA256: sum}
	s.Tools = make([]registry.Tool, 0, len(infos))
	for _, t := range infos {
		s.Tools = append(s.Tools, registry.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	return nil
}

// buildPackage turns plugin.build into a package path that go build reads
// as a directory ("./plugin"), refusing anything that leaves the skill.
func buildPackage(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%w: plugin.build %q must be a relative path inside the skill", errBadPluginPath, rel)
	}
	return "." + string(filepath.Separator) + clean, nil
}

// commandPath resolves plugin.command inside skillDir. Every component is
// checked with Lstat so a symlink can never point the host at a binary
// outside the skill.
func commandPath(skillDir, rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%w: plugin.command %q must be a relative path inside the skill", errBadPluginPath, rel)
	}
	p := skillDir
	for _, part := range strings.Split(clean, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("%w: plugin.command %q: %v", errBadPluginPath, rel, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%w: plugin.command %q goes through the symbolic link %s; commit the real file", errBadPluginPath, rel, part)
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w: plugin.command %q: %v", errBadPluginPath, rel, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%w: plugin.command %q is not an executable file; commit it with the executable bit set", errBadPluginPath, rel)
	}
	return p, nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func indentText(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return prefix + "(no compiler output)"
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
