package plugbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/sumdb/dirhash"
)

// The plugin cache (Options.Cache) keeps built plugins by a hash of
// everything that goes into one, so that a skill built once on a machine
// (another AGENT_HOME, a sync into a fresh home, CI) is copied, not built
// again. The key is deliberately wide: the module folder's every file
// (dirhash), the go.mod and go.sum the build reads (the embedded SDK's
// content-addressed version and hashes are in them), the package, the
// flags, and what `go env` says decides the output in that folder. A
// build that had to resolve a module go.sum did not pin (-mod=mod added
// a requirement or a go.sum line) is not kept, since the
// same inputs could resolve otherwise later; nor is a cgo build (the C
// toolchain is outside the key). Only agent writes the cache, after a
// build succeeded; sandboxed code is never granted it.

// cacheVars are the go env variables that decide a build's output,
// besides the files and flags in the key.
var cacheVars = []string{"GOVERSION", "GOOS", "GOARCH", "GOEXPERIMENT", "GOFLAGS", "GOAMD64", "GOARM64", "GOARM", "GO386", "GOTOOLCHAIN", "CGO_ENABLED"}

// cacheKey hashes the inputs of the build that args describe, run in root
// with env, whose go.mod and go.sum are modPath and its .sum.
func cacheKey(ctx context.Context, goBin string, env []string, root, pkgRel, modPath string, args []string) (string, error) {
	// GOTOOLCHAIN=local: go env must not fetch a toolchain outside the
	// build's sandbox; a go.mod asking for another one is in the key.
	cmd := exec.CommandContext(ctx, goBin, append([]string{"env"}, cacheVars...)...)
	cmd.Dir, cmd.Env = root, append(env[:len(env):len(env)], "GOTOOLCHAIN=local")
	goenv, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go env: %w", err)
	}
	tree, err := dirhash.HashDir(root, "", dirhash.Hash1)
	if err != nil {
		return "", err
	}
	mod, sum, err := modFiles(modPath)
	if err != nil {
		return "", err
	}
	// The flags, less -modfile's temporary path (its content is in mod).
	var flags []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-modfile=") {
			flags = append(flags, a)
		}
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte("agent plugin build 1"), goenv, []byte(tree), mod, sum, []byte(filepath.ToSlash(pkgRel)), []byte(strings.Join(flags, "\x00"))} {
		fmt.Fprintf(h, "%d\n", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// modFiles reads the go.mod and go.sum the build is given.
func modFiles(modPath string) (mod, sum []byte, err error) {
	if mod, err = os.ReadFile(modPath); err != nil {
		return nil, nil, err
	}
	if sum, err = os.ReadFile(strings.TrimSuffix(modPath, ".mod") + ".sum"); err != nil {
		return nil, nil, err
	}
	return mod, sum, nil
}

// resolvedNothing reports that the build resolved no module on its own:
// its go.sum is as it was (sum) and its go.mod requires no module the
// one before it (mod) did not. go may raise a required version (the
// embedded SDK's own requirements), which the inputs decide.
func resolvedNothing(modPath string, mod, sum []byte) bool {
	m, s, err := modFiles(modPath)
	if err != nil || !bytes.Equal(s, sum) {
		return false
	}
	before, err1 := modfile.ParseLax("go.mod", mod, nil)
	after, err2 := modfile.ParseLax("go.mod", m, nil)
	if err1 != nil || err2 != nil {
		return false
	}
	had := map[string]bool{}
	for _, r := range before.Require {
		had[r.Mod.Path] = true
	}
	for _, r := range after.Require {
		if !had[r.Mod.Path] {
			return false
		}
	}
	return true
}

// copyFile copies src to dst through a temporary file beside dst, made
// executable, and renamed into place: a reader never sees half a plugin.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".plugin-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o755)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
