//go:build linux && amd64

package plugbuild_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/internal/plugbuild"
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
	secretFile := filepath.Join(t.TempDir(), "secret")
	secret := []byte("S3CRET-7f1c2a9e-outside-the-skill")
	if err := os.WriteFile(secretFile, secret, 0o600); err != nil {
		t.Fatal(err)
	}
	leakS := "\t.section .rodata\n\t.globl leaked\nleaked:\n\t.incbin \"" + secretFile + "\"\n\t.byte 0\n\t.section .note.GNU-stack,\"\",@progbits\n"
	leakGo := "package main\n\n// extern char leaked[64];\nimport \"C\"\n\nimport \"unsafe\"\n\nvar Leaked = unsafe.Pointer(&C.leaked[0])\n"
	for _, tc := range []struct {
		name  string
		files map[string]string
		cgo   bool
		want  bool // the secret is in the binary
	}{
		{"gcc .incbin without cgo", map[string]string{"leak_amd64.S": leakS, "leak.go": leakGo}, false, false},
		{"gcc .incbin without cgo or import C", map[string]string{"leak_amd64.S": leakS}, false, false},
		// The positive control: the manifest asks for cgo.
		{"gcc .incbin with cgo", map[string]string{"leak_amd64.S": leakS, "leak.go": leakGo}, true, true},
		{"Go assembler include", map[string]string{"leak_amd64.s": "#include \"" + secretFile + "\"\n", "stub.go": "package main\n\nfunc leak()\n"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.cgo {
				if _, err := exec.LookPath("gcc"); err != nil {
					t.Skip("no gcc")
				}
			}
			skill := newSkill(t, pluginGoMod(t))
			for name, src := range tc.files {
				if err := os.WriteFile(filepath.Join(skill, "plugin", name), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "greeter")
			err := plugbuild.Build(context.Background(), plugbuild.Options{Home: t.TempDir(), Environ: env, CGO: tc.cgo}, skill, "./plugin", out)
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
