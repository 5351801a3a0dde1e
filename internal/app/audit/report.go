package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentskills/agent/internal/ground/atomicfile"
)

// WriteText writes a report for a terminal: one line per finding
// (file:line rule severity message), the fix under it, and the rule pack.
// Everything from the skill is escaped (Escape).
func WriteText(w io.Writer, r *Report) error {
	name := r.Skill
	if r.Source != "" {
		name += " (" + r.Source + ")"
	}
	if _, err := fmt.Fprintf(w, "%s: %s; %d file(s) read; rules %s\n", Escape(name, 200), r.Summary(), r.Files, r.Pack); err != nil {
		return err
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "  %s:%d: %s %s: %s\n", Escape(f.File, 200), f.Line, f.Rule, strings.ToUpper(f.Severity.String()), Escape(f.Message, 300))
		if f.Excerpt != "" {
			fmt.Fprintf(w, "      | %s\n", f.Excerpt)
		}
		fmt.Fprintf(w, "      fix: %s\n", f.Fix)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "  skipped %s\n", Escape(s, 200))
	}
	return nil
}

// sarif* are the parts of SARIF 2.1.0 a report fills.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
	// OriginalURIBaseIDs names SKILLROOT, the folder each result's
	// file is relative to.
	OriginalURIBaseIDs map[string]sarifArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Properties         map[string]any                   `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	ShortDescription     sarifMessage      `json:"shortDescription"`
	Help                 sarifMessage      `json:"help"`
	DefaultConfiguration sarifRuleConfig   `json:"defaultConfiguration"`
	Properties           map[string]string `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
	// Properties carry the severity as this host names it, and the fix.
	Properties map[string]string `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifactLocation `json:"artifactLocation"`
	Region           sarifRegion           `json:"region"`
}

type sarifArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int          `json:"startLine"`
	StartColumn int          `json:"startColumn,omitempty"`
	Snippet     sarifMessage `json:"snippet"`
}

// SARIFSchema is the schema a SARIF report names.
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// WriteSARIF writes reports as one SARIF 2.1.0 log, one run per report;
// every rule of rs is listed in each run's driver.
func WriteSARIF(w io.Writer, rs *Rules, reports []*Report, toolVersion string) error {
	log := sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{}}
	var rules []sarifRule
	index := map[string]int{}
	for i, r := range rs.List() {
		index[r.ID] = i
		rules = append(rules, sarifRule{
			ID:                   r.ID,
			ShortDescription:     sarifMessage{Text: r.Description},
			Help:                 sarifMessage{Text: r.Remediation},
			DefaultConfiguration: sarifRuleConfig{Level: r.Severity.sarifLevel()},
			Properties:           map[string]string{"category": r.Category, "severity": r.Severity.String()},
		})
	}
	for _, rep := range reports {
		run := sarifRun{
			Tool:    sarifTool{Driver: sarifDriver{Name: "agent skill audit", Version: toolVersion, Rules: rules}},
			Results: []sarifResult{},
			Properties: map[string]any{
				"skill": rep.Skill, "source": rep.Source, "rulePack": rep.Pack.String(), "files": rep.Files,
			},
		}
		for _, f := range rep.Findings {
			i, ok := index[f.Rule]
			if !ok {
				continue
			}
			run.Results = append(run.Results, sarifResult{
				RuleID: f.Rule, RuleIndex: i, Level: f.Severity.sarifLevel(),
				Message: sarifMessage{Text: f.Message},
				Locations: []sarifLocation{{PhysicalLocation: sarifPhysical{
					ArtifactLocation: sarifArtifactLocation{URI: uriPath(f.File), URIBaseID: "SKILLROOT"},
					Region:           sarifRegion{StartLine: f.Line, StartColumn: max(f.Column, 1), Snippet: sarifMessage{Text: f.Excerpt}},
				}}},
				Properties: map[string]string{"severity": f.Severity.String(), "fix": f.Fix},
			})
		}
		log.Runs = append(log.Runs, run)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// uriPath escapes a slash path for a SARIF relative URI reference.
func uriPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// StateDir is where the last audit of each installed skill is kept:
// $AGENT_HOME/state/audit, beside the integrity records.
func StateDir(home string) string { return filepath.Join(home, "state", "audit") }

// Save records r as the last audit of the installed skill canonical,
// atomically (a reader sees the old record or the new one). It is not
// flushed to disk before the rename: after a power cut the record may be
// the previous one or missing, which info reports as not recorded, and
// the fsync would cost add more than the whole audit.
func Save(home, canonical string, r *Report) error {
	dir := StateDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("save audit of %s: %w", canonical, err)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, canonical+".json"), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("save audit of %s: %w", canonical, err)
	}
	return nil
}

// Last returns the last audit recorded for canonical, or nil when there
// is none.
func Last(home, canonical string) (*Report, error) {
	data, err := os.ReadFile(filepath.Join(StateDir(home), canonical+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the last audit of %s: %w", canonical, err)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("read the last audit of %s: %s is damaged: %w", canonical, filepath.Join(StateDir(home), canonical+".json"), err)
	}
	return &r, nil
}

// Forget removes the last audit of canonical (on remove).
func Forget(home, canonical string) error {
	err := os.Remove(filepath.Join(StateDir(home), canonical+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
