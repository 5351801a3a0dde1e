// Package manifest parses a skill's SKILL.md (SPEC §3): the YAML front
// matter with line-numbered problems, recovery of common mistakes,
// canonical names (SPEC §4) and agent version compatibility. It knows
// nothing of the store or of git.
package manifest
