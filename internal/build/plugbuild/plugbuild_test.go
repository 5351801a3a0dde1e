package plugbuild_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/build/sdkmod"
)

const mainGo = `package main

import (
	"context"

	"github.com/agentskills/agent/sdk"
)

type in struct {
	Name string ` + "`json:\"name\" description:\"who to greet\"`" + `
}

func main() {
	sdk.Serve(sdk.NewSkill(sdk.NewTool("greet", "Greet someone.", func(ctx context.Context, in in) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})))
}
`

// goEnv is the outer go command's caches and no network: the modules the
// SDK needs are in the module cache already (this repository needs them).
func goEnv(t *testing.T) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	l := strings.Split(strings.TrimSpace(string(out)), "\n")
	return append(os.Environ(), "GOCACHE="+l[0], "GOMODCACHE="+l[1], "GOPROXY=off",
		"GOFLAGS=-mod=readonly", "GOTOOLCHAIN=local")
}

func modCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// newSkill writes a skill whose plugin module requires the SDK at an old
// version, as an author's would after the agent moved on.
func newSkill(t *testing.T, goMod string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "skill")
	files := map[string]string{
		"SKILL.md":       "---\nname: greeter\ndescription: Greets.\nplugin:\n  build: ./plugin\n---\nbody\n",
		"plugin/main.go": mainGo,
	}
	if goMod != "" {
		files["plugin/go.mod"] = goMod
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func pluginGoMod(t *testing.T) string {
	t.Helper()
	mod, err := sdkmod.Embedded().PluginGoMod("example.com/greeter/plugin")
	if err != nil {
		t.Fatal(err)
	}
	// An older SDK than the embedded one: the build pins the running one.
	return strings.ReplaceAll(string(mod), sdkmod.Version(), "v0.0.1")
}

func TestBuild(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	for _, tc := range []struct {
		name     string
		terminal bool
		env      string
		slow     time.Duration // without a terminal: when the log line comes
	}{
		{"on a terminal", true, "", 0},
		{"without a terminal, quick", false, "", time.Hour},
		// A log gets one line when a build takes a while, and one at the end.
		{"without a terminal, slow", false, "", time.Nanosecond},
		// go would fetch a GOPRIVATE module from its repository, past the
		// proxy directory: the build uses extracted folders instead.
		{"GOPRIVATE names the SDK", false, "GOPRIVATE=github.com/agentskills/*", time.Hour},
		// A skill inside a git repository, built without GOFLAGS: go's
		// VCS stamping would run git on a .git the sandbox keeps out.
		{"in a git repository", false, "GOFLAGS=", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := env
			if tc.env == "GOFLAGS=" {
				env = append(env[:len(env):len(env)], tc.env)
			} else if tc.env != "" {
				// A module cache without the SDK, so that nothing but the
				// build's own arrangement can supply it; the outer cache
				// serves the other modules as a proxy.
				env = append(env[:len(env):len(env)], tc.env, "GOMODCACHE="+t.TempDir(),
					"GOPROXY=file://"+filepath.ToSlash(filepath.Join(modCache(t), "cache", "download")),
					"GOFLAGS=-modcacherw", "GOSUMDB=off")
			}
			skill := newSkill(t, pluginGoMod(t))
			if tc.env == "GOFLAGS=" {
				if out, err := exec.Command("git", "init", "-q", skill).CombinedOutput(); err != nil {
					t.Fatalf("git init: %v %s", err, out)
				}
			}
			before, err := dirhash.HashDir(skill, "", dirhash.Hash1)
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			out := filepath.Join(t.TempDir(), "bin", "greeter")
			var progress bytes.Buffer
			err = plugbuild.Build(context.Background(), plugbuild.Options{
				Home: home, Environ: env, Name: "greeter",
				Progress: &progress, Terminal: tc.terminal, Tick: 10 * time.Millisecond, Slow: tc.slow,
			}, skill, "./plugin", out)
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(out); err != nil || fi.Mode().Perm()&0o100 == 0 {
				t.Fatalf("no executable at %s: %v", out, err)
			}
			after, err := dirhash.HashDir(skill, "", dirhash.Hash1)
			if err != nil {
				t.Fatal(err)
			}
			if before != after {
				t.Fatal("the build wrote into the skill folder")
			}
			if _, err := os.Stat(filepath.Join(plugbuild.ProxyDir(home), "github.com/agentskills/agent/sdk/@v", sdkmod.Version()+".zip")); err != nil {
				t.Fatalf("no SDK in the proxy: %v", err)
			}
			got := progress.String()
			switch {
			case !tc.terminal && tc.slow == time.Hour:
				if got != "" {
					t.Fatalf("progress of a quick build without a terminal: %q", got)
				}
				return
			case !tc.terminal:
				lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
				if len(lines) != 2 || !strings.HasPrefix(lines[0], "building plugin for greeter (go build; a first build") ||
					!strings.HasPrefix(lines[1], "plugin for greeter built in ") || strings.Contains(got, "\r") {
					t.Fatalf("progress of a slow build without a terminal = %q", got)
				}
				return
			}
			if !strings.HasPrefix(got, "building plugin for greeter (go build)…") || !strings.HasSuffix(got, "\n") || !strings.Contains(got, " done in ") {
				t.Fatalf("progress = %q", got)
			}
		})
	}
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	for _, tc := range []struct {
		name  string
		goMod string
		rel   string
		main  string
		want  error
	}{
		{"no go.mod", "", "./plugin", "", plugbuild.ErrNoModule},
		{"outside the skill", pluginGoMod(t), "../x", "", plugbuild.ErrBadPath},
		{"compile error", pluginGoMod(t), "./plugin", "package main\n\nfunc main() { oops() }\n", plugbuild.ErrBuild},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			skill := newSkill(t, tc.goMod)
			if tc.main != "" {
				if err := os.WriteFile(filepath.Join(skill, "plugin", "main.go"), []byte(tc.main), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := plugbuild.Build(context.Background(), plugbuild.Options{Home: t.TempDir(), Environ: env},
				skill, tc.rel, filepath.Join(t.TempDir(), "out"))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == plugbuild.ErrBuild && !strings.Contains(err.Error(), "undefined: oops") {
				t.Fatalf("no compiler output in %v", err)
			}
		})
	}
}
