package signing

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Signer is one accepted signer as configured: in config.yaml under
// signatures.signers, or recorded by `agent skill trust --signer`.
type Signer struct {
	// Key is the public key itself (an authorized_keys line, a PEM PUBLIC
	// KEY, an armored OpenPGP public key) or the path of a file holding
	// it; a relative path is relative to AGENT_HOME.
	Key string `mapstructure:"key" json:"key"`
	// Sources limits the signer to sources whose URL starts with one of
	// these (oci://HOST/REPO, https://host/org/…); empty means every
	// source. Naming a source makes a signature required for it.
	Sources []string `mapstructure:"sources" json:"sources,omitempty"`
}

// Policy is the signer policy: which keys are accepted for which sources,
// and whether every source must be signed.
type Policy struct {
	// Required asks every git and OCI source for a signature by an
	// accepted key (signatures.required in config.yaml).
	Required bool
	signers  []parsed
}

type parsed struct {
	key     Key
	sources []string
}

// NewPolicy reads each signer's key (a file path is read relative to
// base). An unreadable key is an error naming the signer.
func NewPolicy(required bool, signers []Signer, base string) (*Policy, error) {
	p := &Policy{Required: required}
	for i, s := range signers {
		k, err := s.load(base)
		if err != nil {
			return nil, fmt.Errorf("signer %d: %w", i+1, err)
		}
		for _, src := range s.Sources {
			if strings.TrimSpace(src) == "" {
				return nil, fmt.Errorf("signer %d (%s): an empty source; give URL prefixes or leave sources out", i+1, k.Fingerprint)
			}
		}
		p.signers = append(p.signers, parsed{key: k, sources: s.Sources})
	}
	return p, nil
}

// load reads a signer's key: the key text itself, or a file holding it.
func (s Signer) load(base string) (Key, error) {
	text := strings.TrimSpace(s.Key)
	if text == "" {
		return Key{}, fmt.Errorf("%w: no key given", ErrKey)
	}
	if looksLikeKey(text) {
		return ParseKey([]byte(text))
	}
	p := text
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, p[2:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return Key{}, fmt.Errorf("%w: read %s: %v", ErrKey, p, err)
	}
	k, err := ParseKey(b)
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", p, err)
	}
	return k, nil
}

func looksLikeKey(s string) bool {
	return strings.HasPrefix(s, "-----BEGIN ") || strings.HasPrefix(s, "ssh-") || strings.HasPrefix(s, "ecdsa-") || strings.HasPrefix(s, "sk-")
}

// Keys are the keys accepted for a source, and whether the source must
// be signed by one of them: when the policy requires signatures, or a
// signer names the source.
func (p *Policy) Keys(source string) (keys []Key, required bool) {
	if p == nil {
		return nil, false
	}
	required = p.Required
	for _, s := range p.signers {
		if len(s.sources) == 0 {
			keys = append(keys, s.key)
			continue
		}
		for _, src := range s.sources {
			if covers(src, source) {
				keys = append(keys, s.key)
				required = true
				break
			}
		}
	}
	return keys, required
}

// Empty reports whether the policy neither lists keys nor requires
// signatures: then nothing is checked.
func (p *Policy) Empty() bool { return p == nil || (!p.Required && len(p.signers) == 0) }

// covers reports whether prefix covers source: equal, or a prefix ending
// at a path boundary, so that https://h/team does not cover
// https://h/team-other.
func covers(prefix, source string) bool {
	prefix = strings.TrimSpace(prefix)
	if !strings.HasPrefix(source, prefix) {
		return false
	}
	if len(source) == len(prefix) || strings.HasSuffix(prefix, "/") {
		return true
	}
	// A prefix given without the ".git" of a clone URL covers it.
	return source[len(prefix)] == '/' || source[len(prefix):] == ".git"
}
