// Package provenance is where a skill goes and who vouches for it after it
// is installed: publish a skill folder as an OCI artifact, sign an artifact
// (a Sigstore bundle attached as a referrer), and fill a mirror with the
// locked git skills (SPEC §18). It works over the store core
// (registry.Store: Get, CheckIntegrity, its OCI client and limits) and the
// source family (registry/gitsrc, registry/ocisrc, registry/signing).
//
// Floor 3 (docs/architecture.md). It must not import host, plugins or
// anything of internal/app: the application calls it, never the reverse;
// and the store core must not import it (provenance sits above the core).
// The lock file's types stay in the core for now: sync reads them.
package provenance

import "github.com/agentskills/agent/registry"

// Publisher publishes, signs and mirrors the skills of one store.
type Publisher struct{ Store *registry.Store }

// New returns the publisher over s.
func New(s *registry.Store) *Publisher { return &Publisher{Store: s} }
