package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"github.com/agentskills/agent/internal/ground/tooldesc"
	"github.com/agentskills/agent/plugins/exec"
	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/host"
	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/build/sdkmod"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/sdk"
)

// Errors of the install step besides plugbuild's (ErrBuild, ErrGoMissing,
// ErrBadPath). cmd maps them to advice.
var (
	ErrDescribe = errors.New("plugin did not describe its tools")
	ErrProtocol = errors.New("plugin speaks another protocol")
)

// describeTimeout bounds the one-shot Describe at install time: a plugin
// that never completes the handshake must not hang `agent skill add`.
const describeTimeout = 30 * time.Second

// Preparer is the Prepare step of add, update, sync, trust and link: it
// turns a staged clone into a verified plugin binary plus its cached tool
// list, so that the registry stays ignorant of the host.
type Preparer struct {
	// Build compiles the main package rel (plugin.build) of the skill at
	// skillDir into out (plugbuild.Build), with cgo when the manifest asks
	// for it. A seam so tests can count builds.
	Build func(ctx context.Context, name, skillDir, rel, out string, cgo bool) error
	// Describe asks a plugin binary for its tools (host.Describe).
	Describe func(ctx context.Context, p host.Plugin) ([]sdk.ToolInfo, error)
	// Environ is the agent's own environment, filtered per skill.
	Environ func() []string
	// PassEnv is the configuration's pass_env (host.FilterEnv).
	PassEnv []string
	// Workspace is what $WORKSPACE means in permissions.fs while the
	// plugin describes itself (sandboxed, SPEC §8); "" grants nothing.
	Workspace string
}

// Options configure New.
type Options struct {
	Home    string          // AGENT_HOME: where plugbuild keeps its caches
	Environ func() []string // the agent's environment; nil is empty
	PassEnv []string        // pass_env: secrets the user lets through
	// Workspace is AGENT_WORKSPACE, else the current folder: $WORKSPACE
	// in permissions.fs.
	Workspace string
	Logger    hclog.Logger // plugin output while describing; nil discards
	Progress  io.Writer    // build progress; nil discards
	Terminal  bool         // Progress is a terminal
	// PluginCache is plugbuild's cache of built plugins, shared by every
	// AGENT_HOME of the machine; "" builds every time.
	PluginCache string
}

// New returns the Preparer that builds with plugbuild and describes with
// host.Describe.
func New(o Options) *Preparer {
	environ := o.Environ
	if environ == nil {
		environ = func() []string { return nil }
	}
	logger := o.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return &Preparer{
		Build: func(ctx context.Context, name, skillDir, rel, out string, cgo bool) error {
			return plugbuild.Build(ctx, plugbuild.Options{
				Home: o.Home, Environ: environ(), Name: name,
				Progress: o.Progress, Terminal: o.Terminal, CGO: cgo, Cache: o.PluginCache,
			}, skillDir, rel, out)
		},
		Describe: func(ctx context.Context, p host.Plugin) ([]sdk.ToolInfo, error) {
			return host.Describe(ctx, p, host.WithLogger(logger))
		},
		Environ:   environ,
		PassEnv:   o.PassEnv,
		Workspace: o.Workspace,
	}
}

// Prepare builds or locates the skill's plugin, hashes it and describes its
// tools. It is the registry.Prepare of add, update, sync, trust and link,
// run on the staged copy.
func (in *Preparer) Prepare(ctx context.Context, s *registry.Staged) error {
	m := s.Manifest
	if m != nil {
		s.Runnable = RunnableScripts(s.SkillDir, m) // listed, never run
	}
	if m == nil || m.Plugin == nil {
		return nil
	}
	var bin string
	switch {
	case m.Plugin.Build != "":
		if err := os.MkdirAll(filepath.Dir(s.PluginOut), 0o755); err != nil {
			return fmt.Errorf("build plugin of %s: %w", m.Name, err)
		}
		bctx, span := startStepSpan(ctx, "build", s.Canonical)
		err := in.Build(bctx, m.Name, s.SkillDir, m.Plugin.Build, s.PluginOut, m.CGO)
		endStepSpan(span, err)
		if err != nil {
			return fmt.Errorf("build plugin %s of %s: %w", m.Plugin.Build, m.Name, err)
		}
		bin = s.PluginOut
	case m.Plugin.Command != "":
		p, err := CommandPath(s.SkillDir, m.Plugin.Command)
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
	env := host.FilterEnv(in.Environ(), m.Permissions.Env, in.PassEnv)
	declared := sandbox.Declared(m.Permissions.FS.Read, m.Permissions.FS.Write, m.Permissions.Network, sandbox.Home(env), in.Workspace, "")
	dctx, span := startStepSpan(dctx, "describe", s.Canonical)
	infos, err := in.Describe(dctx, host.Plugin{
		Name:    s.Canonical,
		Path:    bin,
		SHA256:  sum,
		Env:     env,
		Dir:     s.SkillDir,
		Sandbox: &declared,
	})
	endStepSpan(span, err)
	if err != nil {
		if perr := protocolMismatch(err, bin); perr != nil {
			return fmt.Errorf("describe plugin of %s: %w", m.Name, perr)
		}
		return fmt.Errorf("describe plugin of %s: %w: %w", m.Name, ErrDescribe, err)
	}
	s.Plugin = &registry.Plugin{Path: bin, SHA256: sum}
	s.Tools = make([]registry.Tool, 0, len(infos))
	for _, t := range infos {
		s.Tools = append(s.Tools, tooldesc.FromInfo(t))
	}
	return nil
}

// BuildPackage turns plugin.build into a package path that go build reads
// as a directory ("./plugin"), refusing anything that leaves the skill.
func BuildPackage(rel string) (string, error) {
	clean, err := plugbuild.Package(rel)
	if err != nil {
		return "", err
	}
	return "." + string(filepath.Separator) + clean, nil
}

// CommandPath resolves plugin.command inside skillDir. Every component is
// checked with Lstat so a symlink can never point the host at a binary
// outside the skill.
func CommandPath(skillDir, rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%w: plugin.command %q must be a relative path inside the skill", plugbuild.ErrBadPath, rel)
	}
	p := skillDir
	for _, part := range strings.Split(clean, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", fmt.Errorf("%w: plugin.command %q: %v", plugbuild.ErrBadPath, rel, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%w: plugin.command %q goes through the symbolic link %s; commit the real file", plugbuild.ErrBadPath, rel, part)
		}
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%w: plugin.command %q: %v", plugbuild.ErrBadPath, rel, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: plugin.command %q is not a regular file", plugbuild.ErrBadPath, rel)
	}
	if err := runnable(p, rel, fi); err != nil {
		return "", err
	}
	return p, nil
}

// windowsProgram says whether a file that starts with head can be a
// plugin on Windows (command_windows.go), where a file has no execute
// bit: a program is a PE image, which starts with "MZ". A "#!" script is
// refused by name, since Windows runs no interpreter from that line and
// CreateProcess would only say "not a valid Win32 application".
func windowsProgram(rel string, head []byte) error {
	switch {
	case bytes.HasPrefix(head, []byte("MZ")):
		return nil
	case bytes.HasPrefix(head, []byte("#!")):
		return fmt.Errorf("%w: plugin.command %q is a script (it starts with #!), which Windows cannot run: give the skill a Go plugin (plugin.build, built for this system at install) or commit a Windows program (.exe)", plugbuild.ErrBadPath, rel)
	}
	return fmt.Errorf("%w: plugin.command %q is not a Windows program (an .exe starts with MZ): give the skill a Go plugin (plugin.build) instead", plugbuild.ErrBadPath, rel)
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

// pluginVersionRE is go-plugin's handshake refusal: the plugin's app
// protocol is not one the host speaks.
var pluginVersionRE = lazyregexp.New(`incompatible API version with plugin\. Plugin version: (\d+)`)

// protocolMismatch turns go-plugin's version refusal into an error that
// names both protocol versions and, when the binary records it, the SDK
// module it was built with. nil when err is another failure.
func protocolMismatch(err error, bin string) error {
	m := pluginVersionRE.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	built := ""
	if bi, berr := buildinfo.ReadFile(bin); berr == nil {
		for _, d := range bi.Deps {
			if d.Path == sdkmod.SDKPath {
				built = fmt.Sprintf(", built with %s %s", d.Path, d.Version)
			}
		}
	}
	return fmt.Errorf("%w: the plugin speaks protocol %s%s; this agent speaks protocols %d to %d (SDK %s)",
		ErrProtocol, m[1], built, sdk.OldestProtocol, sdk.ProtocolVersion, sdkmod.Version())
}

// RunnableScripts lists the script files of the skill in dir that can run
// (slash paths inside dir, as exec.List finds them), never nil: what
// add records in the registry so that listings read no folder.
func RunnableScripts(dir string, m *manifest.Manifest) []string {
	out := []string{}
	scripts, err := exec.List(dir, m.Scripts, m.ScriptsIgnore)
	if err != nil {
		return out
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return out
	}
	for _, s := range scripts {
		if rel, err := filepath.Rel(abs, s.Path); s.Err == nil && err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}
