package registry

import (
	"sort"

	"github.com/agentskills/agent/registry/gitsrc"
)

// SourceWellKnown marks an entry installed from an agent-skills discovery
// index (registry/wellknown): its GitURL is the index's address
// (https://HOST[/PATH]/.well-known/agent-skills/index.json), its Subdir
// the skill's name in the index, and its CommitSHA the skill's sha256:
// digest, which a lock records as its commit. An index serves one version
// of each skill: update installs a changed digest as a new version, sync
// and rollback find only the digest the site still serves.
const SourceWellKnown = "wellknown"

// editsOf lists e's local edits before an update. A git source compares
// the folder with the installed commit's tree (localEdits); a well-known
// index serves only its current version, so e's folder is compared with
// its integrity record instead.
func (s *Store) editsOf(snap *gitsrc.Snapshot, e Entry) []string {
	if e.Source != SourceWellKnown {
		return localEdits(snap, e)
	}
	c, recorded, err := s.Verify(e, true)
	switch {
	case err != nil || !recorded:
		return []string{"(cannot compare: no integrity record of " + e.Canonical + ")"}
	case c.Unnamed:
		return []string{"(the folder's hash changed; no record says which files)"}
	}
	var edits []string
	for _, l := range []struct {
		paths []string
		how   string
	}{{c.Changed, "modified"}, {c.Added, "added"}, {c.Removed, "deleted"}} {
		for _, p := range l.paths {
			edits = append(edits, p+" ("+l.how+")")
		}
	}
	sort.Strings(edits)
	return edits
}
