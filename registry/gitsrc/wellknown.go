package gitsrc

import (
	"net/url"
	"strings"
)

// KindWellKnown is an agent-skills discovery index (registry/wellknown),
// recorded by its address (IsWellKnownIndex).
const KindWellKnown = KindOCI + 1

// Pinner is a snapshot FS whose skill folders each carry their own pin
// (a well-known index gives every skill its own sha256: digest, where a
// git commit pins every folder of its tree at once).
type Pinner interface {
	Pin(dir string) (string, bool)
}

// PinOf is what pins the skill folder dir of s: its own pin when the
// snapshot's FS gives folders one (Pinner), else the snapshot's commit.
func (s *Snapshot) PinOf(dir string) string {
	if p, ok := s.FS.(Pinner); ok {
		if pin, ok := p.Pin(dir); ok {
			return pin
		}
	}
	return s.Commit
}

// IsWellKnownIndex reports whether u is the address of an agent-skills
// discovery index: an http(s) URL whose path ends in
// /.well-known/agent-skills/index.json (v0.2) or /.well-known/skills/index.json
// (v0.1). Registry entries and locks record a well-known source by it.
func IsWellKnownIndex(u string) bool {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.RawQuery != "" || p.Fragment != "" {
		return false
	}
	return strings.HasSuffix(p.Path, "/.well-known/agent-skills/index.json") || strings.HasSuffix(p.Path, "/.well-known/skills/index.json")
}
