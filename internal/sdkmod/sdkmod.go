// Package sdkmod carries the plugin SDK inside the agent binary: the
// modules github.com/agentskills/agent/sdk and .../proto as Go module zips,
// at the version of this build. WriteProxy lays them out as a GOPROXY
// directory, so a plugin whose go.mod requires the SDK builds on a machine
// that has only agent, Go and the public module proxy.
//
// The zips are generated from sdk/ and proto/ by `make generate` (go
// generate ./internal/sdkmod); TestEmbeddedIsCurrent fails when they are
// stale.
package sdkmod

//go:generate go run ./gen -root ../..

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"sort"
	"strings"

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

// Module is one embedded module.
type Module struct {
	Path string
	Zip  []byte
}

// Modules returns the embedded modules, proto first.
func Modules() []Module {
	return []Module{{ProtoPath, protoZip}, {SDKPath, sdkZip}}
}

// File returns the content of name (a path inside the module, such as
// "go.mod") from a module zip.
func (m Module) File(name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(m.Zip), int64(len(m.Zip)))
	if err != nil {
		return nil, fmt.Errorf("read %s zip: %w", m.Path, err)
	}
	f, err := zr.Open(m.Path + "@" + Version() + "/" + name)
	if err != nil {
		return nil, fmt.Errorf("read %s zip: %w", m.Path, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

// GoSum returns go.sum lines that let a plugin requiring the SDK build
// without asking a checksum database: the hashes of the embedded modules
// themselves, then the go.sum of each (which covers their dependencies).
func GoSum() ([]byte, error) {
	var own, deps []string
	for _, m := range Modules() {
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
		own = append(own, m.Path+" "+Version()+" "+h, m.Path+" "+Version()+"/go.mod "+hm)
		sum, err := m.File("go.sum")
		if err == nil {
			deps = append(deps, strings.Split(strings.TrimSpace(string(sum)), "\n")...)
		}
	}
	return []byte(MergeSums(strings.Join(own, "\n"), strings.Join(deps, "\n"))), nil
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
