package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentskills/agent/registry/manifest"

	"github.com/agentskills/agent/registry/gitsrc"
)

// LoadInstalled reads an installed skill's SKILL.md and, when the entry
// recorded its sha256 at install, refuses it with ErrModified if it changed
// since: a skill edited on disk after the user reviewed and installed it is
// not used until it is reinstalled. An edit that makes the file invalid is
// reported as the *ManifestError it causes. The bytes that are hashed are the bytes
// that are parsed, so the file cannot change in between.
//
// e may be stale: an update can commit between reading the registry and
// reading the file, and a killed update can leave the new folder in place
// under the old entry. On a mismatch LoadInstalled therefore takes the
// registry lock (waiting for a commit in progress), lets recovery put a
// killed update's folder back, and compares again with the entry as the
// registry now records it.
func LoadInstalled(e Entry) (*manifest.Manifest, []manifest.Problem, error) {
	if e.ManifestSHA256 == "" {
		return gitsrc.LoadManifest(e.Path)
	}
	data, file, got, err := readAndHash(e)
	if err != nil || got != e.ManifestSHA256 {
		// A killed update on a file system without RENAME_EXCHANGE may
		// even have left no folder: recovery puts the old one back.
		if fresh, ok := recheck(e); ok {
			e = fresh
			data, file, got, err = readAndHash(e)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if got != e.ManifestSHA256 {
		// An edit that broke the file is reported as what it is, with
		// its line; the skill is refused either way.
		if _, _, perr := manifest.ParseManifest(file, data); perr != nil {
			return nil, nil, perr
		}
		return nil, nil, fmt.Errorf("%w: %s of skill %s changed after install (sha256 %s, installed %s); it is not used. "+
			"Discard the edit with 'agent skill update %s' once a new commit exists, or 'agent skill remove %s --yes' and add it again",
			ErrModified, file, e.Canonical, gitsrc.Short(got), gitsrc.Short(e.ManifestSHA256), e.Canonical, e.Canonical)
	}
	return manifest.ParseManifest(file, data)
}

// readAndHash reads e's manifest; file is its path.
func readAndHash(e Entry) (data []byte, file, sum string, err error) {
	data, file, err = gitsrc.ReadManifest(e.Path)
	if err != nil {
		var me *manifest.ManifestError
		if errors.As(err, &me) {
			return nil, file, "", err
		}
		return nil, file, "", fmt.Errorf("load %s: %w", e.Canonical, err)
	}
	h := sha256.Sum256(data)
	return data, file, hex.EncodeToString(h[:]), nil
}

// recheck returns e as the registry records it now, after waiting for any
// commit in progress and recovering a killed one. It works out the store
// from e.Path ($AGENT_HOME/skills/<canonical>); ok is false when that is
// not where e lives.
func recheck(e Entry) (Entry, bool) {
	skills := filepath.Dir(e.Path)
	if filepath.Base(e.Path) != e.Canonical || filepath.Base(skills) != "skills" {
		return Entry{}, false
	}
	s := NewStore(filepath.Dir(skills))
	unlock, err := lockRegistry(s.SkillsDir())
	if err != nil {
		return Entry{}, false
	}
	defer unlock()
	entries, err := s.read()
	if err != nil {
		return Entry{}, false
	}
	recovery{s}.run(entries)
	fresh, err := find(entries, e.Canonical)
	if err != nil || fresh.Path != e.Path {
		return Entry{}, false
	}
	return fresh, true
}

// manifestSHA256 is the hex sha256 of dir/SKILL.md.
func manifestSHA256(dir string) (string, error) {
	data, _, err := gitsrc.ReadManifest(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
