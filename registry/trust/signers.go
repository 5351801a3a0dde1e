package trust

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/signing"
)

// SignersPath is $AGENT_HOME/signers.json: the signers `agent skill
// trust --signer` recorded.
func (s Records) SignersPath() string { return filepath.Join(s.Home, "signers.json") }

type signersFile struct {
	Signers []signing.Signer `json:"signers"`
}

// Signers reads the recorded signers; a missing file is none, a damaged
// one is registry.ErrCorrupt naming it.
func (s Records) Signers() ([]signing.Signer, error) {
	var f signersFile
	err := readState(s.SignersPath(), &f, "fix it, or delete it and add the signers again (agent skill trust --signer KEY)")
	return f.Signers, err
}

// readState decodes the JSON state file at path into v: a missing file
// leaves v as it is, a damaged one is registry.ErrCorrupt naming it with advice.
func readState(path string, v any, advice string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %s: %v; %s", registry.ErrCorrupt, path, err, advice)
	}
	return nil
}

// AddSigner records an accepted signer: its public key (the text, not a
// path, so that the record stands alone) and the sources it is for (none:
// every source). The same key recorded again has its sources merged.
// It returns the parsed key.
func (s Records) AddSigner(keyText []byte, sources []string) (signing.Key, error) {
	k, err := signing.ParseKey(keyText)
	if err != nil {
		return signing.Key{}, fmt.Errorf("add signer: %w", err)
	}
	if err := os.MkdirAll(s.Home, 0o755); err != nil {
		return signing.Key{}, err
	}
	err = s.Edit(func([]registry.Entry) ([]registry.Entry, error) {
		cur, err := s.Signers()
		if err != nil {
			return nil, err
		}
		for i, c := range cur {
			ck, err := signing.ParseKey([]byte(c.Key))
			if err != nil || ck.Fingerprint != k.Fingerprint {
				continue
			}
			switch {
			case len(sources) == 0 || len(c.Sources) == 0:
				cur[i].Sources = nil
			default:
				for _, src := range sources {
					if !slices.Contains(c.Sources, src) {
						cur[i].Sources = append(cur[i].Sources, src)
					}
				}
			}
			return nil, s.writeSigners(cur)
		}
		return nil, s.writeSigners(append(cur, signing.Signer{Key: string(keyText), Sources: sources}))
	})
	if err != nil {
		return signing.Key{}, fmt.Errorf("add signer %s: %w", k.Fingerprint, err)
	}
	return k, nil
}

func (s Records) writeSigners(signers []signing.Signer) error {
	b, err := json.MarshalIndent(signersFile{Signers: signers}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(s.SignersPath(), append(b, '\n'), 0o644)
}
