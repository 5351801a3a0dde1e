//go:build linux && amd64

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

// TestBuildIncbin is issue 34's trial: a plugin whose leak_amd64.S
// includes a file from outside the skill with .incbin (gcc assembles
// .S files, with cgo only) must not get that file into its binary unless
// its manifest asks for cgo; a Go assembler .s file has no .incbin, and
// its #include of the same file does not build. Judged by the bytes of
// the built binary.
func TestBuildIncbin(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	secret := []byte("S3CRET-7f1c2a9e-outside-the-skill")
	// A secret file of its own per case: go's build cache keys a .S file
	// by its text, not by what it .incbins, so two cases naming one file
	// would share the first one's object.
	secretFile := func(t *testing.T) string {
		f := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(f, secret, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	leakS := func(t *testing.T) string {
		return "\t.section .rodata\n\t.globl leaked\nleaked:\n\t.incbin \"" + secretFile(t) + "\"\n\t.byte 0\n\t.section .note.GNU-stack,\"\",@progbits\n"
	}
	leakGo := "package main\n\n// extern char leaked[64];\nimport \"C\"\n\nimport \"unsafe\"\n\nvar Leaked = unsafe.Pointer(&C.leaked[0])\n"
	unsandboxed := func(cmd *exec.Cmd, _ plugbuild.Needs) error { return procgroup.Spawn(cmd) }
	for _, tc := range []struct {
		name  string
		files func(*testing.T) map[string]string
		cgo   bool
		start func(*exec.Cmd, plugbuild.Needs) error // nil: the sandboxed build
		want  bool                                   // the secret is in the binary
	}{
		{"gcc .incbin without cgo", func(t *testing.T) map[string]string {
			return map[string]string{"leak_amd64.S": leakS(t), "leak.go": leakGo}
		}, false, nil, false},
		{"gcc .incbin without cgo or import C", func(t *testing.T) map[string]string { return map[string]string{"leak_amd64.S": leakS(t)} }, false, nil, false},
		// With cgo, the sandbox keeps the file out of the build.
		{"gcc .incbin with cgo, sandboxed", func(t *testing.T) map[string]string {
			return map[string]string{"leak_amd64.S": leakS(t), "leak.go": leakGo}
		}, true, nil, false},
		// The positive control: with cgo and no sandbox, it leaks.
		{"gcc .incbin with cgo, unsandboxed", func(t *testing.T) map[string]string {
			return map[string]string{"leak_amd64.S": leakS(t), "leak.go": leakGo}
		}, true, unsandboxed, true},
		{"Go assembler include", func(t *testing.T) map[string]string {
			return map[string]string{"leak_amd64.s": "#include \"" + secretFile(t) + "\"\n", "stub.go": "package main\n\nfunc leak()\n"}
		}, false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.cgo {
				if _, err := exec.LookPath("gcc"); err != nil {
					t.Skip("no gcc")
				}
			}
			skill := newSkill(t, pluginGoMod(t))
			for name, src := range tc.files(t) {
				if err := os.WriteFile(filepath.Join(skill, "plugin", name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "greeter")
			err := plugbuild.Build(context.Background(), plugbuild.Options{Home: t.TempDir(), Environ: env, CGO: tc.cgo, Start: tc.start}, skill, "./plugin", out)
			bin, _ := os.ReadFile(out)
			if got := bytes.Contains(bin, secret); got != tc.want {
				t.Fatalf("secret in the binary: %v, want %v (build error: %v)", got, tc.want, err)
			}
			if tc.want {
				return
			}
			t.Logf("build: %v", err)
		})
	}
}
