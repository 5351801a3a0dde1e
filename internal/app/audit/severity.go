package audit

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Severity orders findings; the zero value is below every real one.
type Severity int

const (
	SeverityNone Severity = iota
	SeverityInfo
	SeverityLow
	SeverityMedium
	SeverityHigh
	SeverityCritical
)

var severityNames = [...]string{"none", "info", "low", "medium", "high", "critical"}

func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// ParseSeverity reads a severity name in any case; "none" (or "") is
// SeverityNone, which a --fail-on uses to mean never.
func ParseSeverity(s string) (Severity, error) {
	l := strings.ToLower(strings.TrimSpace(s))
	if l == "" {
		return SeverityNone, nil
	}
	for i, n := range severityNames {
		if n == l {
			return Severity(i), nil
		}
	}
	return SeverityNone, fmt.Errorf("%w: %q (one of info, low, medium, high, critical, none)", ErrSeverity, s)
}

func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// MarshalJSON keeps the name in JSON, as MarshalText does.
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// sarifLevel maps a severity to SARIF's result.level.
func (s Severity) sarifLevel() string {
	switch {
	case s >= SeverityHigh:
		return "error"
	case s >= SeverityMedium:
		return "warning"
	default:
		return "note"
	}
}
