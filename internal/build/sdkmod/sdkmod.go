package sdkmod

//go:generate go run ./gen -root ../../..

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/sumdb/dirhash"
)

// Module paths of the SDK and the protocol it speaks.
const (
	SDKPath   = "github.com/agentskills/agent/sdk"
	ProtoPath = "github.com/agentskills/agent/proto"
)

var (
	//go:embed sdk.zip
	sdkZip []byte
	//go:embed proto.zip
	protoZip []byte
	//go:embed version.txt
	version string
)

// Version is the one version both embedded modules carry:
// v<agent version>-h<first 12 hex digits of a hash of their sources>. The
// hash makes it content-addressed, so a module cache never holds two
// different SDKs under one version.
func Version() string { return strings.TrimSpace(version) }

// Embedded is the SDK this binary carries.
func Embedded() Built {
	return Built{Version: Version(), SDKZip: sdkZip, ProtoZip: protoZip}
}

// Module is one module zip.
type Module struct {
	Path    string
	Version string
	Zip     []byte
}

// Modules returns the embedded modules, proto first.
func Modules() []Module { return Embedded().Modules() }

// Modules returns b's modules, proto first.
func (b Built) Modules() []Module {
	return []Module{{ProtoPath, b.Version, b.ProtoZip}, {SDKPath, b.Version, b.SDKZip}}
}

// File returns the content of name (a path inside the module, such as
// "go.mod") from a module zip.
func (m Module) File(name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(m.Zip), int64(len(m.Zip)))
	if err != nil {
		return nil, fmt.Errorf("read %s zip: %w", m.Path, err)
	}
	f, err := zr.Open(m.Path + "@" + m.Version + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("read %s zip: %w", m.Path, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// GoSum returns go.sum lines that let a plugin requiring the SDK build
// without asking a checksum database: the hashes of the embedded modules
// themselves, then the go.sum of each (which covers their dependencies).
func GoSum() ([]byte, error) { return Embedded().GoSum() }

// GoSum is the go.sum lines of b's modules and their dependencies.
func (b Built) GoSum() ([]byte, error) {
	var own, deps []string
	for _, m := range b.Modules() {
		h, err := hashZip(m)
		if err != nil {
			return nil, err
		}
		mod, err := m.File("go.mod")
		if err != nil {
			return nil, err
		}
		hm, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(mod)), nil
		})
		if err != nil {
			return nil, err
		}
		own = append(own, m.Path+" "+m.Version+" "+h, m.Path+" "+m.Version+"/go.mod "+hm)
		sum, err := m.File("go.sum")
		if err == nil {
			deps = append(deps, strings.Split(strings.TrimSpace(string(sum)), "\n")...)
		}
	}
	return []byte(MergeSums(strings.Join(own, "\n"), strings.Join(deps, "\n"))), nil
}

// PluginGoMod is the go.mod of a new plugin module at modulePath, as
// `agent skill init` writes it: the SDK's go version, the SDK, and every
// module the SDK needs, as go mod tidy would list them for a main package
// that imports only the SDK.
func (b Built) PluginGoMod(modulePath string) ([]byte, error) {
	var sdk Module
	for _, m := range b.Modules() {
		if m.Path == SDKPath {
			sdk = m
		}
	}
	data, err := sdk.File("go.mod")
	if err != nil {
		return nil, err
	}
	sf, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		return nil, err
	}
	f := new(modfile.File)
	if err := f.AddModuleStmt(modulePath); err != nil {
		return nil, err
	}
	if sf.Go != nil {
		if err := f.AddGoStmt(sf.Go.Version); err != nil {
			return nil, err
		}
	}
	f.AddNewRequire(SDKPath, b.Version, false)
	for _, r := range sf.Require {
		f.AddNewRequire(r.Mod.Path, r.Mod.Version, true)
	}
	f.SetRequireSeparateIndirect(f.Require)
	f.Cleanup()
	return f.Format()
}

// MergeSums joins go.sum texts, dropping duplicate and empty lines, sorted
// as the go command writes them.
func MergeSums(sums ...string) string {
	seen := map[string]bool{}
	var lines []string
	for _, s := range sums {
		for _, l := range strings.Split(s, "\n") {
			l = strings.TrimSpace(l)
			if l != "" && !seen[l] {
				seen[l] = true
				lines = append(lines, l)
			}
		}
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// hashZip is dirhash.HashZip over an in-memory zip.
func hashZip(m Module) (string, error) {
	zr, err := zip.NewReader(bytes.NewReader(m.Zip), int64(len(m.Zip)))
	if err != nil {
		return "", fmt.Errorf("read %s zip: %w", m.Path, err)
	}
	byName := map[string]*zip.File{}
	var names []string
	for _, f := range zr.File {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	return dirhash.Hash1(names, func(name string) (io.ReadCloser, error) {
		return byName[name].Open()
	})
}
