package sdkmod

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentskills/agent/internal/ground/lazyregexp"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// Built is what Build makes of a source tree: the version and the two
// module zips that go:embed carries.
type Built struct {
	Version  string
	SDKZip   []byte
	ProtoZip []byte
}

// versionFile holds the agent's version, the base of the SDK's version.
const versionFile = "cmd/agent/internal/cli/version.go"

var versionRE = lazyregexp.New(`(?m)^var Version = "([^"]+)"`)

// Build makes the module zips from the repository at root: sdk/ and proto/,
// without tests or testdata. The sdk zip's go.mod requires proto at the
// shared version instead of the placeholder the repository's go.mod holds
// (go.work joins them during development).
func Build(root string) (Built, error) {
	src, err := os.ReadFile(filepath.Join(root, versionFile))
	if err != nil {
		return Built{}, fmt.Errorf("read agent version: %w", err)
	}
	m := versionRE.FindSubmatch(src)
	if m == nil {
		return Built{}, fmt.Errorf("read agent version: no `var Version = \"...\"` in %s", versionFile)
	}
	sdkFiles, err := moduleFiles(filepath.Join(root, "sdk"))
	if err != nil {
		return Built{}, err
	}
	protoFiles, err := moduleFiles(filepath.Join(root, "proto"))
	if err != nil {
		return Built{}, err
	}
	all := map[string][]byte{}
	for name, b := range sdkFiles {
		all["sdk/"+name] = b
	}
	for name, b := range protoFiles {
		all["proto/"+name] = b
	}
	h, err := hashFiles(all)
	if err != nil {
		return Built{}, err
	}
	v := "v" + string(m[1]) + "-h" + h
	if !semverOK(v) {
		return Built{}, fmt.Errorf("agent version %q makes the invalid module version %s", m[1], v)
	}
	mod, err := pinProto(sdkFiles["go.mod"], v)
	if err != nil {
		return Built{}, err
	}
	sdkFiles["go.mod"] = mod
	b := Built{Version: v}
	if b.SDKZip, err = zipModule(SDKPath, v, sdkFiles); err != nil {
		return Built{}, err
	}
	if b.ProtoZip, err = zipModule(ProtoPath, v, protoFiles); err != nil {
		return Built{}, err
	}
	return b, nil
}

func semverOK(v string) bool {
	return module.Check(SDKPath, v) == nil
}

// moduleFiles reads what a plugin build needs of the module at dir, by
// slash path: Go sources (no tests), .proto files, go.mod and go.sum.
// testdata, hidden folders and nested modules are left out.
func moduleFiles(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			if p == dir {
				return nil
			}
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		keep := name == "go.mod" && rel == "go.mod" || name == "go.sum" && rel == "go.sum" ||
			strings.HasSuffix(name, ".proto") ||
			strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")
		if !keep || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[rel] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read module %s: %w", dir, err)
	}
	if files["go.mod"] == nil {
		return nil, fmt.Errorf("read module %s: no go.mod", dir)
	}
	return files, nil
}

// hashFiles is the first 12 hex digits of sha256 over the h1: hash of files.
func hashFiles(files map[string][]byte) (string, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h1, err := dirhash.Hash1(names, func(n string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(files[n])), nil
	})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(h1))
	return hex.EncodeToString(sum[:])[:12], nil
}

// pinProto sets the sdk go.mod's requirement on proto to v.
func pinProto(mod []byte, v string) ([]byte, error) {
	f, err := modfile.Parse("sdk/go.mod", mod, nil)
	if err != nil {
		return nil, err
	}
	if err := f.AddRequire(ProtoPath, v); err != nil {
		return nil, err
	}
	f.Cleanup()
	return f.Format()
}

type memFile struct {
	path string
	data []byte
}

func (f memFile) Path() string                 { return f.path }
func (f memFile) Lstat() (os.FileInfo, error)  { return memInfo(f), nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo memFile

func (i memInfo) Name() string       { return filepath.Base(i.path) }
func (i memInfo) Size() int64        { return int64(len(i.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

func zipModule(path, v string, files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	zf := make([]modzip.File, 0, len(names))
	for _, n := range names {
		zf = append(zf, memFile{n, files[n]})
	}
	var buf bytes.Buffer
	if err := modzip.Create(&buf, module.Version{Path: path, Version: v}, zf); err != nil {
		return nil, fmt.Errorf("zip %s: %w", path, err)
	}
	return buf.Bytes(), nil
}
