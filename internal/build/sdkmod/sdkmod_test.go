package sdkmod_test

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/build/sdkmod"
)

// TestEmbeddedIsCurrent fails when sdk/ or proto/ changed since the last
// `make generate`: the embedded modules must be what the repository holds.
func TestEmbeddedIsCurrent(t *testing.T) {
	b, err := sdkmod.Build("../../..")
	if err != nil {
		t.Fatal(err)
	}
	if b.Version != sdkmod.Version() {
		t.Fatalf("embedded SDK is %s, sources make %s: run `make generate` and commit internal/build/sdkmod", sdkmod.Version(), b.Version)
	}
	for _, m := range sdkmod.Modules() {
		want := b.SDKZip
		if m.Path == sdkmod.ProtoPath {
			want = b.ProtoZip
		}
		if got, wantFiles := zipFiles(t, m.Zip), zipFiles(t, want); !equalFiles(got, wantFiles) {
			t.Errorf("embedded %s differs from the sources: run `make generate`", m.Path)
		}
	}
}

func zipFiles(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = string(data)
	}
	return files
}

func equalFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestEmbeddedHasNoHeavyDependencies(t *testing.T) {
	for _, m := range sdkmod.Modules() {
		mod, err := m.File("go.mod")
		if err != nil {
			t.Fatal(err)
		}
		for _, banned := range []string{"go-git", "spf13/cobra", "spf13/viper", "agentskills/agent "} {
			if strings.Contains(string(mod), banned) {
				t.Errorf("%s go.mod requires %s:\n%s", m.Path, banned, mod)
			}
		}
	}
}

// TestWriteProxy serves the embedded modules to a real go command from a
// file:// GOPROXY and checks the go.sum lines GoSum gives.
func TestWriteProxy(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	proxy := filepath.Join(dir, "proxy")
	if err := sdkmod.WriteProxy(proxy); err != nil {
		t.Fatal(err)
	}
	// A second write keeps what is there.
	if err := sdkmod.WriteProxy(proxy); err != nil {
		t.Fatal(err)
	}
	list, err := os.ReadFile(filepath.Join(proxy, "github.com/agentskills/agent/sdk/@v/list"))
	if err != nil || strings.TrimSpace(string(list)) != sdkmod.Version() {
		t.Fatalf("list = %q, %v", list, err)
	}
	cache := filepath.Join(dir, "modcache")
	cmd := exec.Command("go", "mod", "download", "-json", sdkmod.SDKPath+"@"+sdkmod.Version())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(proxy), "GOMODCACHE="+cache,
		"GOFLAGS=-modcacherw", "GONOSUMDB="+sdkmod.SDKPath, "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	sum, err := sdkmod.GoSum()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, sdkmod.SDKPath+" ") {
			h := strings.Fields(l)[2]
			if !strings.Contains(string(out), h) {
				t.Errorf("go mod download reports other hashes than GoSum's %q:\n%s", l, out)
			}
		}
	}
}

func TestPluginGoMod(t *testing.T) {
	mod, err := sdkmod.Embedded().PluginGoMod("example.com/hello/plugin")
	if err != nil {
		t.Fatal(err)
	}
	s := string(mod)
	for _, want := range []string{"module example.com/hello/plugin", "require " + sdkmod.SDKPath + " " + sdkmod.Version(), sdkmod.ProtoPath + " " + sdkmod.Version() + " // indirect", "google.golang.org/grpc"} {
		if !strings.Contains(s, want) {
			t.Errorf("go.mod lacks %q:\n%s", want, s)
		}
	}
}

// TestExamplesArePinned: the example plugin modules require the embedded
// version (make generate pins them).
func TestExamplesArePinned(t *testing.T) {
	for _, dir := range sdkmod.Examples {
		mod, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(dir), "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(mod), sdkmod.SDKPath+" "+sdkmod.Version()) {
			t.Errorf("%s/go.mod does not require %s %s: run `make generate`", dir, sdkmod.SDKPath, sdkmod.Version())
		}
	}
}
