package trust

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/registry"
)

// FolderTrust records that the user trusted a discovered skill's folder
// as its files were then: DirHash is their h1: hash, checked at first use
// like an installed skill's, so an edit after trust is refused until the
// user trusts the folder again.
type FolderTrust struct {
	Path      string    `json:"path"`
	Canonical string    `json:"canonical"`
	DirHash   string    `json:"dir_hash"`
	TrustedAt time.Time `json:"trusted_at"`
}

type trustedFoldersFile struct {
	Folders []FolderTrust `json:"folders"`
}

// TrustedFoldersPath is $AGENT_HOME/trusted-folders.json: the discovered
// skill folders `agent skill trust` recorded.
func (s Records) TrustedFoldersPath() string { return filepath.Join(s.Home, "trusted-folders.json") }

// TrustedFolders reads the trusted discovered folders; a missing file is
// none, a damaged one is registry.ErrCorrupt naming it.
func (s Records) TrustedFolders() ([]FolderTrust, error) {
	var f trustedFoldersFile
	err := readState(s.TrustedFoldersPath(), &f, "fix or delete it (discovered skills are then untrusted again)")
	return f.Folders, err
}

// TrustFolder records the discovered skill in dir as trusted, with the
// hash of its files now. A folder holding a symbolic link is refused, as
// at install.
func (s Records) TrustFolder(dir, canonical string) (FolderTrust, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return FolderTrust{}, err
	}
	if err := registry.CheckNoLinks(abs); err != nil {
		return FolderTrust{}, fmt.Errorf("trust %s: %w", canonical, err)
	}
	// The per-file record names what changed when a first use refuses
	// an edited folder.
	h1, err := s.RecordFolder(canonical, abs)
	if err != nil {
		return FolderTrust{}, fmt.Errorf("trust %s: hash %s: %w", canonical, abs, err)
	}
	rec := FolderTrust{Path: abs, Canonical: canonical, DirHash: h1, TrustedAt: s.now()}
	if err := s.editTrustedFolders(func(cur []FolderTrust) []FolderTrust {
		cur = slices.DeleteFunc(cur, func(f FolderTrust) bool { return f.Path == abs })
		return append(cur, rec)
	}); err != nil {
		return FolderTrust{}, fmt.Errorf("trust %s: %w", canonical, err)
	}
	return rec, nil
}

// UntrustFolder forgets the trust of the discovered skill in dir; it
// reports whether there was any.
func (s Records) UntrustFolder(dir string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false, err
	}
	found := false
	err = s.editTrustedFolders(func(cur []FolderTrust) []FolderTrust {
		n := len(cur)
		cur = slices.DeleteFunc(cur, func(f FolderTrust) bool { return f.Path == abs })
		found = len(cur) != n
		return cur
	})
	return found, err
}

// editTrustedFolders rewrites trusted-folders.json under the registry
// lock.
func (s Records) editTrustedFolders(edit func([]FolderTrust) []FolderTrust) error {
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		return err
	}
	return s.Edit(func([]registry.Entry) ([]registry.Entry, error) {
		cur, err := s.TrustedFolders()
		if err != nil {
			return nil, err
		}
		next := edit(cur)
		slices.SortFunc(next, func(a, b FolderTrust) int { return strings.Compare(a.Path, b.Path) })
		b, err := json.MarshalIndent(trustedFoldersFile{Folders: next}, "", "  ")
		if err != nil {
			return nil, err
		}
		return nil, atomicfile.Write(s.TrustedFoldersPath(), append(b, '\n'), 0o644)
	})
}
