package plugbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/internal/build/sdkmod"
)

// BenchmarkSetup is what Build adds around `go build` on every build: the
// proxy directory (already written), the go env lookup and the temp
// go.mod/go.sum. go build itself takes seconds to minutes.
func BenchmarkSetup(b *testing.B) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command")
	}
	home := b.TempDir()
	root := filepath.Join(b.TempDir(), "plugin")
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	mod, err := sdkmod.Embedded().PluginGoMod("example.com/x/plugin")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), mod, 0o644); err != nil {
		b.Fatal(err)
	}
	proxy := ProxyDir(home)
	ctx := context.Background()
	for b.Loop() {
		if err := sdkmod.WriteProxy(proxy); err != nil {
			b.Fatal(err)
		}
		if _, _, err := buildEnv(ctx, goBin, os.Environ(), proxy, false); err != nil {
			b.Fatal(err)
		}
		tmp, err := os.MkdirTemp("", "bench-")
		if err != nil {
			b.Fatal(err)
		}
		if err := writeModfile(root, filepath.Join(tmp, "go.mod"), nil); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(tmp)
	}
}
