package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Listing is what listings (`agent tools`, `prompt`, `skill list`, `check`,
// MCP) need of a skill's SKILL.md and folder, recorded at install so that
// they parse no SKILL.md and walk no folder (SPEC §5, "The registry is the
// index"). It is trusted only while Fingerprint matches the installed
// SKILL.md; otherwise the reader parses the file, which also refuses one
// changed after install.
type Listing struct {
	// Fingerprint is "size:mtime_ns:inode" of the installed SKILL.md.
	Fingerprint string `json:"fingerprint"`

	MinAgentVersion string      `json:"min_agent_version,omitempty"`
	MaxAgentVersion string      `json:"max_agent_version,omitempty"`
	AgentVersion    string      `json:"agent_version,omitempty"`
	Plugin          *PluginSpec `json:"plugin,omitempty"`
	// Scripts and ScriptsIgnore are the manifest's fields; Runnable is the
	// script files found at install (file names under scripts/), so that
	// no listing reads the scripts folder.
	Scripts       []string `json:"scripts,omitempty"`
	ScriptsIgnore []string `json:"scripts_ignore,omitempty"`
	Runnable      []string `json:"runnable,omitempty"`
	Env           []string `json:"env,omitempty"`

	AllowedTools           []string `json:"allowed-tools,omitempty"`
	ArgumentHint           string   `json:"argument-hint,omitempty"`
	DisableModelInvocation bool     `json:"disable-model-invocation,omitempty"`
	UserInvocable          *bool    `json:"user-invocable,omitempty"`
	Context                string   `json:"context,omitempty"`
	Agent                  string   `json:"agent,omitempty"`
	Model                  string   `json:"model,omitempty"`

	// Warnings are the SKILL.md warnings found at install.
	Warnings []Problem `json:"warnings,omitempty"`
}

// NewListing records m, the runnable scripts and the fingerprint of dir's
// SKILL.md. runnable is nil when the caller did not list the scripts; then
// there is no listing (nil), and readers parse SKILL.md as before.
func NewListing(dir string, m *Manifest, warnings []Problem, runnable []string) (*Listing, error) {
	if m == nil || runnable == nil {
		return nil, nil
	}
	fp, err := ManifestFingerprint(dir)
	if err != nil {
		return nil, err
	}
	l := &Listing{
		Fingerprint:     fp,
		MinAgentVersion: m.MinAgentVersion, MaxAgentVersion: m.MaxAgentVersion, AgentVersion: m.AgentVersion,
		Plugin:  m.Plugin,
		Scripts: m.Scripts, ScriptsIgnore: m.ScriptsIgnore, Runnable: runnable, Env: m.Permissions.Env,
		AllowedTools: m.AllowedTools, ArgumentHint: m.ArgumentHint, DisableModelInvocation: m.DisableModelInvocation,
		UserInvocable: m.UserInvocable, Context: m.Context, Agent: m.Agent, Model: m.Model,
	}
	l.Warnings = warnings
	return l, nil
}

// ManifestFingerprint is "size:mtime_ns:inode" of dir/SKILL.md, from one
// lstat: no file is opened.
func ManifestFingerprint(dir string) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(dir, ManifestFile), &st); err != nil {
		return "", &os.PathError{Op: "lstat", Path: filepath.Join(dir, ManifestFile), Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return "", fmt.Errorf("%s: not a regular file", filepath.Join(dir, ManifestFile))
	}
	var buf [64]byte
	b := strconv.AppendInt(buf[:0], st.Size, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, st.Mtim.Nano(), 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, st.Ino, 10)
	return string(b), nil
}

// Indexed returns the manifest as the entry recorded it, without parsing
// SKILL.md, when the entry has a listing and SKILL.md still has the
// recorded fingerprint. The manifest has no Body and no metadata: Layer 2
// and info read the file.
func (e Entry) Indexed() (*Manifest, bool) {
	l := e.Listing
	if l == nil || e.Path == "" {
		return nil, false
	}
	fp, err := ManifestFingerprint(e.Path)
	if err != nil || fp != l.Fingerprint {
		return nil, false
	}
	return &Manifest{
		Name: e.Name, Description: e.Description, Version: e.Version,
		MinAgentVersion: l.MinAgentVersion, MaxAgentVersion: l.MaxAgentVersion, AgentVersion: l.AgentVersion,
		Plugin: l.Plugin, Scripts: l.Scripts, ScriptsIgnore: l.ScriptsIgnore, Permissions: Permissions{Env: l.Env},
		AllowedTools: l.AllowedTools, ArgumentHint: l.ArgumentHint, DisableModelInvocation: l.DisableModelInvocation,
		UserInvocable: l.UserInvocable, Context: l.Context, Agent: l.Agent, Model: l.Model,
	}, true
}
