package manifest

import (
	"fmt"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// CheckCompatibility checks m's min_agent_version, max_agent_version and
// agent_version against the running agent's version. An agent version that
// is not semver (a "dev" build) is compatible with everything, so that
// development builds can install any skill.
func CheckCompatibility(m *Manifest, agentVersion string) error {
	if m == nil || agentVersion == "" {
		return nil
	}
	v, err := semver.NewVersion(agentVersion)
	if err != nil {
		return nil
	}
	// Pre-release builds (0.3.0-dev) count as their release: constraints
	// written by skill authors never mention pre-releases.
	if v.Prerelease() != "" || v.Metadata() != "" {
		rel, _ := v.SetPrerelease("")
		rel, _ = rel.SetMetadata("")
		v = &rel
	}
	fix := "upgrade agent, or install a version of the skill that supports this agent (--version)"
	if m.MinAgentVersion != "" {
		if min, err := semver.NewVersion(m.MinAgentVersion); err == nil && v.LessThan(min) {
			return fmt.Errorf("%w: skill %s needs agent >= %s, this is agent %s; %s", ErrIncompatible, m.Name, m.MinAgentVersion, agentVersion, fix)
		}
	}
	if m.MaxAgentVersion != "" {
		if max, err := semver.NewVersion(m.MaxAgentVersion); err == nil && v.GreaterThan(max) {
			return fmt.Errorf("%w: skill %s supports agent <= %s, this is agent %s; %s", ErrIncompatible, m.Name, m.MaxAgentVersion, agentVersion,
				strings.Replace(fix, "upgrade agent", "use an older agent", 1))
		}
	}
	if m.AgentVersion != "" {
		if c, err := semver.NewConstraint(m.AgentVersion); err == nil && !c.Check(v) {
			return fmt.Errorf("%w: skill %s needs agent %s, this is agent %s; %s", ErrIncompatible, m.Name, m.AgentVersion, agentVersion, fix)
		}
	}
	return nil
}
