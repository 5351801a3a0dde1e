package manifest

import (
	"errors"
	"testing"

	"github.com/Masterminds/semver/v3"
)

// FuzzCheckCompatibility checks an arbitrary agent version against
// arbitrary version fields of a manifest: nil or ErrIncompatible, never a
// panic, and a non-semver (dev) agent is compatible with everything.
func FuzzCheckCompatibility(f *testing.F) {
	for _, s := range [][4]string{
		{"0.3.0", "0.2", "1.0.0", ">=0.1, <2"},
		{"0.3.0-dev+abc", "0.3.0", "", ""},
		{"dev", "9.9.9", "0.0.1", "<0"},
		{"1.2.3", "", "", "^1.2 || ~0.9"},
		{"v1", "x", "1.x", ">= 1.0.0-0"},
		{"1.0.0", "", "", "!=1.0.0"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, agent, min, max, constraint string) {
		m := &Manifest{Name: "x", MinAgentVersion: min, MaxAgentVersion: max, AgentVersion: constraint}
		err := CheckCompatibility(m, agent)
		if err != nil && !errors.Is(err, ErrIncompatible) {
			t.Fatalf("CheckCompatibility(%q, %q, %q, %q): %v", agent, min, max, constraint, err)
		}
		if _, verr := semver.NewVersion(agent); verr != nil && err != nil {
			t.Fatalf("dev agent %q is incompatible: %v", agent, err)
		}
	})
}
