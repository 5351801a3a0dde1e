package plugbuild_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/internal/build/plugbuild"
	"github.com/agentskills/agent/internal/isolation/procgroup"
)

// TestBuildCache: a plugin built once is copied, not built, for the same
// inputs in another AGENT_HOME; a changed source, a changed GOFLAGS or
// cgo builds again; and a build that resolved a requirement go.sum did
// not pin is not kept.
func TestBuildCache(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	cache := t.TempDir()
	skill := newSkill(t, pluginGoMod(t))
	builds := 0
	build := func(t *testing.T, skill string, env []string, cgo bool) []byte {
		t.Helper()
		out := filepath.Join(t.TempDir(), "bin", "greeter")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		err := plugbuild.Build(context.Background(), plugbuild.Options{
			Home: t.TempDir(), Environ: env, Name: "greeter", Cache: cache, CGO: cgo,
			Start: func(cmd *exec.Cmd, _ plugbuild.Needs) error { builds++; return procgroup.Spawn(cmd) },
		}, skill, "./plugin", out)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(out); fi.Mode().Perm()&0o100 == 0 {
			t.Fatal("the plugin is not executable")
		}
		return b
	}

	first := build(t, skill, env, false)
	if builds != 1 {
		t.Fatalf("%d builds, want 1", builds)
	}
	if again := build(t, skill, env, false); builds != 1 || !bytes.Equal(again, first) {
		t.Fatalf("the same inputs: %d builds (want 1), same bytes %v", builds, bytes.Equal(again, first))
	}
	// A copy of the skill elsewhere is the same inputs (-trimpath).
	moved := filepath.Join(t.TempDir(), "elsewhere")
	if out, err := exec.Command("cp", "-a", skill, moved).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if build(t, moved, env, false); builds != 1 {
		t.Fatalf("the same skill in another folder was built again (%d builds)", builds)
	}

	for _, tc := range []struct {
		name  string
		skill func(t *testing.T) string
		env   []string
		cgo   bool
	}{
		{"a changed source", func(t *testing.T) string {
			s := newSkill(t, pluginGoMod(t))
			if err := os.WriteFile(filepath.Join(s, "plugin", "extra.go"), []byte("package main\n\nvar extra = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return s
		}, env, false},
		{"another GOFLAGS", func(*testing.T) string { return skill }, append(env[:len(env):len(env)], "GOFLAGS=-ldflags=-X=main.x=1"), false},
		{"cgo", func(*testing.T) string { return skill }, env, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := builds
			build(t, tc.skill(t), tc.env, tc.cgo)
			if builds != n+1 {
				t.Fatalf("%s: %d builds, want 1", tc.name, builds-n)
			}
		})
	}
	// cgo builds are never kept: the C toolchain is outside the key.
	n := builds
	build(t, skill, env, true)
	if builds != n+1 {
		t.Fatal("a cgo build came from the cache")
	}
}
