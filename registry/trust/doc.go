// Package trust keeps what this home trusts beyond the installed entries
// (SPEC §6, §18): the accepted signers (signers.json, `agent skill trust
// --signer`) and the discovered skill folders the user trusted with the
// hash of their files then (trusted-folders.json). Both files are written
// under the registry's lock (registry.Store.Edit); a trusted folder's
// per-file integrity record is written by the core (RecordFolder), which
// checks it at first use like an installed skill's.
//
// Floor 3 (docs/architecture.md). It works over the store core and must
// not import host, plugins or internal/app; the store core must not import
// it. The trust flag of an installed entry and its integrity hashes stay
// in the core (registry.Entry), since every read needs them.
package trust

import (
	"time"

	"github.com/agentskills/agent/registry"
)

// Records are the trust records of one home over its store core. Records
// embeds the core so that it is also what the workspace reads
// (workspace.Installed: the entries and the trusted folders).
type Records struct{ *registry.Store }

// Of returns the trust records of s's home.
func Of(s *registry.Store) Records { return Records{Store: s} }

func (s Records) now() time.Time {
	if s.Store.Now == nil {
		return time.Now().UTC()
	}
	return s.Store.Now().UTC()
}
