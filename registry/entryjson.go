package registry

import (
	"encoding/json"
	"time"
)

// entryJSON is an Entry as registry.json holds it: flat, with its keys in
// the order agents wrote them before Entry's fields were grouped, so that
// a registry.json reads and writes back byte for byte (the index keeps
// each entry's line, and people diff the file). Every Entry field has its
// place here; TestEntryJSONKeepsEveryField fails naming one that does not.
// Decoding needs no such help: the embedded groups' fields decode flat.
type entryJSON struct {
	Name            string      `json:"name"`
	Canonical       string      `json:"canonical"`
	Source          string      `json:"source"`
	URL             string      `json:"git_url,omitempty"`
	Ref             string      `json:"ref,omitempty"`
	Constraint      string      `json:"constraint,omitempty"`
	Version         string      `json:"version,omitempty"`
	CommitSHA       string      `json:"commit_sha,omitempty"`
	Trusted         bool        `json:"trusted"`
	InstalledAt     time.Time   `json:"installed_at,omitzero"`
	UpdatedAt       time.Time   `json:"updated_at,omitzero"`
	Path            string      `json:"path"`
	Subdir          string      `json:"subdir,omitempty"`
	Description     string      `json:"description,omitempty"`
	Plugin          *Plugin     `json:"plugin,omitempty"`
	ManifestSHA256  string      `json:"manifest_sha256,omitempty"`
	DirHash         string      `json:"dir_hash,omitempty"`
	Tools           []Tool      `json:"tools,omitempty"`
	PreviousSHA     string      `json:"previous_sha,omitempty"`
	Stamp           string      `json:"stamp,omitempty"`
	PreviousDirHash string      `json:"previous_dir_hash,omitempty"`
	NamedOnly       bool        `json:"named_only,omitempty"`
	Listing         *Listing    `json:"listing,omitempty"`
	Placements      []Placement `json:"placements,omitempty"`
	Signer          string      `json:"signer,omitempty"`
	TrustedHashes   []string    `json:"trusted_hashes,omitempty"`
}

func (e *Entry) wire() *entryJSON {
	return &entryJSON{
		Name: e.Name, Canonical: e.Canonical, Source: e.Source,
		URL: e.URL, Ref: e.Ref, Constraint: e.Constraint, Version: e.Version, CommitSHA: e.CommitSHA,
		Trusted:     e.Trusted,
		InstalledAt: e.InstalledAt, UpdatedAt: e.UpdatedAt,
		Path: e.Path, Subdir: e.Subdir, Description: e.Description, Plugin: e.Plugin,
		ManifestSHA256: e.ManifestSHA256, DirHash: e.DirHash,
		Tools:       e.Tools,
		PreviousSHA: e.PreviousSHA, Stamp: e.Stamp, PreviousDirHash: e.PreviousDirHash,
		NamedOnly: e.NamedOnly, Listing: e.Listing, Placements: e.Placements,
		Signer: e.Signer, TrustedHashes: e.TrustedHashes,
	}
}

// MarshalJSON writes e flat, in registry.json's key order.
func (e Entry) MarshalJSON() ([]byte, error) { return json.Marshal(e.wire()) }

// UnmarshalJSON reads e as registry.json holds it. The listing's manifest
// takes the entry's name, description and version, as the index's
// decoder gives it, so that both reads give the same entry.
func (e *Entry) UnmarshalJSON(data []byte) error {
	type plain Entry // without this method
	if err := json.Unmarshal(data, (*plain)(e)); err != nil {
		return err
	}
	if l := e.Listing; l != nil {
		l.Manifest.Name, l.Manifest.Description, l.Manifest.Version = e.Name, e.Description, e.Version
	}
	return nil
}
