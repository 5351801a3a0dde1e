package plugbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/agentskills/agent/internal/build/sdkmod"
	"github.com/agentskills/agent/internal/ground/platform"
	"github.com/agentskills/agent/internal/isolation/procgroup"
)

var (
	// ErrGoMissing: no go command on PATH.
	ErrGoMissing = errors.New("go toolchain not found")
	// ErrNoModule: no go.mod between the plugin's package and the skill root.
	ErrNoModule = errors.New("plugin has no go.mod inside the skill")
	// ErrBadPath: plugin.build leaves the skill.
	ErrBadPath = errors.New("bad plugin path")
	// ErrBuild: go build failed; the error carries the compiler output.
	ErrBuild = errors.New("plugin build failed")
)

// Options says where and how to build.
type Options struct {
	// Home is AGENT_HOME; the SDK proxy lives in Home/cache/goproxy.
	Home string
	// Environ is the environment go runs with (nil: this process's).
	Environ []string
	// Name is the skill's name, for progress.
	Name string
	// Progress receives "building plugin for <name> (go build)…" and the
	// elapsed time, redrawn, when Terminal is true. Without a terminal it
	// gets one line once a build has taken Slow, and one when it ends, so
	// that a first build (minutes on a cold Go cache) does not look hung
	// in a log; a quick build writes nothing. nil is silent.
	Progress io.Writer
	Terminal bool
	// Tick is how often progress is redrawn (default one second).
	Tick time.Duration
	// Slow is how long a build runs before a log gets its line (default
	// DefaultSlow).
	Slow time.Duration
	// CGO lets go build run the C toolchain (the skill's manifest asks
	// for cgo, SPEC §3 agent.cgo). Without it the build has
	// CGO_ENABLED=0: gcc never runs, so a .S file's .incbin or a C
	// file's #include cannot compile a file from outside the skill into
	// the plugin.
	CGO bool
	// Cache, when not "", is a folder of built plugins kept by the hash of
	// everything that goes into one (cache.go): a hit is copied to out
	// instead of built; a successful build is kept there. "" builds
	// every time.
	Cache string
	// Start starts go build (nil: in its sandbox, see policy). needs
	// says what the build reads, writes and reaches. The command has a
	// parent-death signal tied to the thread that starts it: start it
	// with procgroup.Spawn, not from an ordinary goroutine's thread.
	Start func(cmd *exec.Cmd, needs Needs) error
}

// Needs is what one go build reaches, for a sandbox policy: it reads
// the skill and GOROOT, reads and writes the module and build caches,
// writes Out and Tmp (its -modfile), reads Proxy (the embedded SDK's
// GOPROXY folder) and dials Hosts (the GOPROXY and GOSUMDB hosts as
// host:port; empty when GOPROXY is off or only folders).
type Needs struct {
	Skill, GOROOT, GOMODCACHE, GOCACHE, Out, Tmp, Proxy string
	// SDK is the folder the SDK is extracted to when GONOPROXY names
	// it ("" otherwise): the build reads it.
	SDK   string
	Hosts []string
}

// DefaultSlow is how long a build runs before Progress without a terminal
// hears of it.
const DefaultSlow = 3 * time.Second

// ProxyDir is the GOPROXY directory the embedded SDK is served from.
func ProxyDir(home string) string { return filepath.Join(home, "cache", "goproxy") }

// Package turns plugin.build (a slash path such as "./plugin") into a clean
// relative path, refusing anything that leaves the skill.
func Package(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if !filepath.IsLocal(clean) {
		return "", fmt.Errorf("%w: plugin.build %q must be a relative path inside the skill", ErrBadPath, rel)
	}
	return clean, nil
}

// ModuleRoot finds the folder holding the plugin's go.mod: pkgDir or a
// parent of it, never above skillDir.
func ModuleRoot(skillDir, pkgDir string) (string, error) {
	for d := pkgDir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && fi.Mode().IsRegular() {
			return d, nil
		}
		if d == skillDir || len(d) <= len(skillDir) {
			return "", fmt.Errorf("%w: no go.mod in %s or its parents up to the skill folder", ErrNoModule, pkgDir)
		}
	}
}

// Build compiles the main package at skillDir/rel (plugin.build) into out.
// The returned error wraps ErrBuild with go's output when compiling fails.
func Build(ctx context.Context, opts Options, skillDir, rel, out string) error {
	clean, err := Package(rel)
	if err != nil {
		return err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return ErrGoMissing
	}
	skillDir = filepath.Clean(skillDir)
	pkgDir := filepath.Join(skillDir, clean)
	root, err := ModuleRoot(skillDir, pkgDir)
	if err != nil {
		return err
	}
	proxy := ProxyDir(opts.Home)
	if err := sdkmod.WriteProxy(proxy); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "agent-plugbuild-")
	if err != nil {
		return fmt.Errorf("build plugin: %w", err)
	}
	defer os.RemoveAll(tmp)
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	env, goenv, err := buildEnv(ctx, goBin, environ, proxy, opts.CGO)
	if err != nil {
		return err
	}
	direct := goenv.direct
	var dirs map[string]string
	if direct {
		// GONOPROXY (or GOPRIVATE) names the SDK: go would skip the proxy
		// directory and ask its repository, so hand it the folders.
		if dirs, err = sdkmod.Extract(filepath.Join(opts.Home, "cache", "sdk")); err != nil { // Needs.SDK
			return err
		}
	}
	modPath := filepath.Join(tmp, "go.mod")
	if err := writeModfile(root, modPath, dirs); err != nil {
		return err
	}
	pkgRel, _ := filepath.Rel(root, pkgDir)
	absOut, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("build plugin: %w", err)
	}
	// -buildvcs=false: the sandbox lets the build read the skill's
	// folder only, not a repository's .git above it (git would fail, and
	// go with it), and the install pins the commit anyway.
	args := append([]string{"build", "-modfile=" + modPath, "-mod=mod", "-trimpath", "-buildvcs=false"}, platform.BuildFlags()...)
	var key string
	var mod, sum []byte
	if opts.Cache != "" && !opts.CGO {
		// A key that cannot be made only means no cache.
		if k, kerr := cacheKey(ctx, goBin, env, root, pkgRel, modPath, args); kerr == nil {
			key = k
			if copyFile(filepath.Join(opts.Cache, key), absOut) == nil {
				return nil
			}
			mod, sum, _ = modFiles(modPath)
		}
	}
	cmd := exec.CommandContext(ctx, goBin, append(args, "-o", absOut, "."+string(filepath.Separator)+pkgRel)...)
	cmd.Dir = root
	cmd.Env = env
	needs := Needs{Skill: skillDir, GOROOT: goenv.goroot, GOMODCACHE: goenv.modcache, GOCACHE: goenv.cache,
		Out: filepath.Dir(absOut), Tmp: tmp, Proxy: proxy, Hosts: goenv.hosts}
	if direct {
		needs.SDK = filepath.Join(opts.Home, "cache", "sdk")
	}
	stop := progress(opts)
	output, err := runConfined(opts, cmd, needs)
	stop(err == nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &BuildError{Err: err, Output: output}
	}
	if key != "" && resolvedNothing(modPath, mod, sum) {
		// Best effort: a cache that cannot be written is only slower.
		if os.MkdirAll(opts.Cache, 0o700) == nil {
			_ = copyFile(absOut, filepath.Join(opts.Cache, key))
		}
	}
	return nil
}

// runConfined runs cmd (go build, go test) in a process group of its own,
// so that it dies with the agent and a cancel (Ctrl-C) stops the compiler
// processes too, confined to needs by the sandbox (opts.Start in tests).
// It returns the command's combined output.
func runConfined(opts Options, cmd *exec.Cmd, needs Needs) (string, error) {
	group, err := procgroup.New(cmd)
	if err != nil {
		return "", err
	}
	defer group.Release()
	cmd.Cancel = func() error { group.Kill(); return nil }
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	var release func()
	start := func(cmd *exec.Cmd, n Needs) (err error) {
		release, err = sandboxed(cmd, n)
		return err
	}
	if opts.Start != nil {
		start = opts.Start
	}
	if err = start(cmd, needs); err == nil {
		if err = group.Started(); err != nil {
			_ = cmd.Wait()
		} else {
			err = group.Wait()
		}
	}
	if release != nil {
		release()
	}
	return output.String(), err
}

// BuildError is a failed go build with its output.
type BuildError struct {
	Err    error
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("%v (%v)\n%s", ErrBuild, e.Err, indent(e.Output, "    "))
}

func (e *BuildError) Unwrap() error { return ErrBuild }

func indent(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return prefix + "(no compiler output)"
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// writeModfile copies root's go.mod to modPath with the SDK and proto
// pinned to the embedded version (or replaced by dirs, by module path, when
// given), and writes the go.sum beside it: the plugin's own go.sum plus the
// embedded modules' lines.
func writeModfile(root, modPath string, dirs map[string]string) error {
	src := filepath.Join(root, "go.mod")
	data, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("build plugin: %w", err)
	}
	f, err := modfile.Parse(src, data, nil)
	if err != nil {
		return fmt.Errorf("build plugin: %w: %w", ErrBuild, err)
	}
	v := sdkmod.Version()
	for _, p := range []string{sdkmod.SDKPath, sdkmod.ProtoPath} {
		newPath, newVersion := p, v
		if d, ok := dirs[p]; ok {
			newPath, newVersion = d, ""
		}
		if err := f.AddReplace(p, "", newPath, newVersion); err != nil {
			return fmt.Errorf("build plugin: %w", err)
		}
	}
	f.Cleanup()
	mod, err := f.Format()
	if err != nil {
		return fmt.Errorf("build plugin: %w", err)
	}
	own, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("build plugin: %w", err)
	}
	embedded, err := sdkmod.GoSum()
	if err != nil {
		return err
	}
	if err := os.WriteFile(modPath, mod, 0o644); err != nil {
		return fmt.Errorf("build plugin: %w", err)
	}
	sum := strings.TrimSuffix(modPath, ".mod") + ".sum"
	if err := os.WriteFile(sum, []byte(sdkmod.MergeSums(string(own), string(embedded))), 0o644); err != nil {
		return fmt.Errorf("build plugin: %w", err)
	}
	return nil
}

// goEnv is what buildEnv learnt from go env.
type goEnv struct {
	direct                  bool
	goroot, modcache, cache string
	hosts                   []string
	flags                   string // GOFLAGS
}

// buildEnv is environ with the embedded SDK's proxy in front of the user's
// GOPROXY, the SDK out of the checksum database (it is not published),
// no go.work from a parent folder, and CGO_ENABLED=0 unless cgo. direct
// reports that GONOPROXY (which defaults to GOPRIVATE) matches the SDK,
// so go would not use the proxy directory for it.
func buildEnv(ctx context.Context, goBin string, environ []string, proxy string, cgo bool) (env []string, ge goEnv, err error) {
	cmd := exec.CommandContext(ctx, goBin, "env", "GOPROXY", "GONOSUMDB", "GONOPROXY", "GOROOT", "GOMODCACHE", "GOCACHE", "GOSUMDB", "GOFLAGS")
	cmd.Env = environ
	out, err := cmd.Output()
	if err != nil {
		return nil, ge, fmt.Errorf("build plugin: go env: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for len(lines) < 8 {
		lines = append(lines, "")
	}
	ge = goEnv{
		direct: module.MatchPrefixPatterns(lines[2], sdkmod.SDKPath) || module.MatchPrefixPatterns(lines[2], sdkmod.ProtoPath),
		goroot: lines[3], modcache: lines[4], cache: lines[5], hosts: proxyHosts(lines[0], lines[6]), flags: lines[7],
	}
	goproxy := "file://" + filepath.ToSlash(proxy)
	if lines[0] != "" {
		goproxy += "," + lines[0]
	}
	nosum := "github.com/agentskills/agent/sdk,github.com/agentskills/agent/proto"
	if lines[1] != "" {
		nosum = lines[1] + "," + nosum
	}
	env = make([]string, 0, len(environ)+4)
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOPROXY", "GONOSUMDB", "GOWORK":
			continue
		case "CGO_ENABLED":
			if !cgo {
				continue
			}
		}
		env = append(env, kv)
	}
	env = append(env, "GOPROXY="+goproxy, "GONOSUMDB="+nosum, "GOWORK=off")
	if !cgo {
		env = append(env, "CGO_ENABLED=0")
	}
	return env, ge, nil
}

// proxyHosts are the host:port entries of GOPROXY's URLs and of the
// checksum database GOSUMDB names ("sum.golang.org" or "name+key url").
func proxyHosts(goproxy, gosumdb string) []string {
	var out []string
	add := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
			return
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		host := net.JoinHostPort(u.Hostname(), port)
		if _, _, err := net.SplitHostPort(host); err != nil {
			return
		}
		if !slices.Contains(out, host) {
			out = append(out, host)
		}
	}
	for _, p := range strings.FieldsFunc(goproxy, func(r rune) bool { return r == ',' || r == '|' }) {
		add(p)
	}
	if f := strings.Fields(gosumdb); len(f) > 0 && f[0] != "off" {
		name, _, _ := strings.Cut(f[0], "+")
		if len(f) > 1 {
			add(f[1])
		} else {
			add("https://" + name)
		}
	}
	return out
}

// progress shows a build on a terminal: the line at once, then the
// elapsed time. The returned stop ends the line. Without a terminal it is
// logProgress.
func progress(opts Options) (stop func(ok bool)) {
	if opts.Progress == nil {
		return func(bool) {}
	}
	if !opts.Terminal {
		return logProgress(opts)
	}
	tick := opts.Tick
	if tick <= 0 {
		tick = time.Second
	}
	start := time.Now()
	line := fmt.Sprintf("building plugin for %s (go build)…", opts.Name)
	fmt.Fprint(opts.Progress, line)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fmt.Fprintf(opts.Progress, "\r%s %s", line, elapsed(time.Since(start)))
			}
		}
	}()
	return func(ok bool) {
		close(done)
		wg.Wait()
		word := "done"
		if !ok {
			word = "failed"
		}
		fmt.Fprintf(opts.Progress, "\r%s %s in %s\n", line, word, elapsed(time.Since(start)))
	}
}

// logProgress writes a line, without redrawing, when a build has run for
// opts.Slow, and a second one when that build ends; a build that ends
// sooner writes nothing.
func logProgress(opts Options) (stop func(ok bool)) {
	slow := opts.Slow
	if slow <= 0 {
		slow = DefaultSlow
	}
	start := time.Now()
	var mu sync.Mutex
	said, stopped := false, false
	timer := time.AfterFunc(slow, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		said = true
		fmt.Fprintf(opts.Progress, "building plugin for %s (go build; a first build on a cold Go cache downloads and compiles the SDK's dependencies and takes a minute or more)…\n", opts.Name)
	})
	return func(ok bool) {
		timer.Stop()
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if !said {
			return
		}
		word := "built"
		if !ok {
			word = "failed to build"
		}
		fmt.Fprintf(opts.Progress, "plugin for %s %s in %s\n", opts.Name, word, elapsed(time.Since(start)))
	}
}

func elapsed(d time.Duration) string {
	return d.Round(100 * time.Millisecond).String()
}
