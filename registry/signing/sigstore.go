package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Media and predicate types of a skill signature.
const (
	// BundleMediaType is a Sigstore bundle v0.3 in JSON: the
	// artifactType of the referrer that holds it.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// StatementType is the in-toto statement the bundle's DSSE envelope
	// carries; its subject is the skill artifact's manifest digest.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateType says what the statement claims: that the signer
	// signed the subject, as cosign's signatures in bundle form do.
	PredicateType = "https://sigstore.dev/cosign/sign/v1"
	// InTotoPayloadType is the DSSE payload type of an in-toto statement.
	InTotoPayloadType = "application/vnd.in-toto+json"

	maxBundle   = 1 << 20
	maxSubjects = 1024
)

// bundle is the JSON form (protojson, camelCase) of a Sigstore bundle
// (sigstore/protobuf-specs dev.sigstore.bundle.v1.Bundle), with the
// fields a key-based DSSE bundle has. Bytes are base64, as protojson
// writes them and encoding/json reads them.
type bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial verificationMaterial `json:"verificationMaterial"`
	DSSEEnvelope         *envelope            `json:"dsseEnvelope,omitempty"`
	MessageSignature     json.RawMessage      `json:"messageSignature,omitempty"`
}

type verificationMaterial struct {
	PublicKey   *publicKeyIdentifier `json:"publicKey,omitempty"`
	Certificate json.RawMessage      `json:"certificate,omitempty"`
	TlogEntries json.RawMessage      `json:"tlogEntries,omitempty"`
}

type publicKeyIdentifier struct {
	Hint string `json:"hint"`
}

type envelope struct {
	Payload     []byte          `json:"payload"`
	PayloadType string          `json:"payloadType"`
	Signatures  []dsseSignature `json:"signatures"`
}

type dsseSignature struct {
	Sig   []byte `json:"sig"`
	KeyID string `json:"keyid,omitempty"`
}

type statement struct {
	Type          string         `json:"_type"`
	Subject       []subject      `json:"subject"`
	PredicateType string         `json:"predicateType"`
	Predicate     map[string]any `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// pae is DSSE's pre-authentication encoding: what is signed.
func pae(payloadType string, payload []byte) []byte {
	return fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(payloadType), payloadType, len(payload), payload)
}

// SignBundle signs digest (sha256:<hex>, an artifact's manifest digest)
// with key: a Sigstore bundle (v0.3, JSON) holding a DSSE envelope over
// an in-toto statement whose subject is name at digest, and a public-key
// hint (the key's fingerprint) as its verification material. No
// certificate and no transparency log: it is checked offline against a
// listed public key (VerifyBundle; sigstore-go verifies it too).
func SignBundle(key crypto.Signer, name, digest string) ([]byte, error) {
	hexDigest, err := sha256Hex(digest)
	if err != nil {
		return nil, err
	}
	k, err := FromPublic(key.Public())
	if err != nil {
		return nil, err
	}
	payload, err := json.Marshal(statement{
		Type:          StatementType,
		Subject:       []subject{{Name: name, Digest: map[string]string{"sha256": hexDigest}}},
		PredicateType: PredicateType,
		Predicate:     map[string]any{},
	})
	if err != nil {
		return nil, err
	}
	msg := pae(InTotoPayloadType, payload)
	var sig []byte
	switch p := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(p, msg)
	case *ecdsa.PrivateKey:
		h, _ := hashFor(&p.PublicKey)
		d := h.New()
		d.Write(msg)
		if sig, err = ecdsa.SignASN1(rand.Reader, p, d.Sum(nil)); err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
	default:
		return nil, fmt.Errorf("%w: a %T key; sign with an ed25519 or ECDSA key", ErrKey, key)
	}
	return json.Marshal(bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: verificationMaterial{PublicKey: &publicKeyIdentifier{Hint: k.Fingerprint}},
		DSSEEnvelope: &envelope{Payload: payload, PayloadType: InTotoPayloadType,
			Signatures: []dsseSignature{{Sig: sig, KeyID: k.Fingerprint}}},
	})
}

// bundleMediaTypes are the bundle versions read: a key-based bundle is
// the same in each.
var bundleMediaTypes = []string{
	BundleMediaType,
	"application/vnd.dev.sigstore.bundle+json;version=0.3",
	"application/vnd.dev.sigstore.bundle+json;version=0.2",
	"application/vnd.dev.sigstore.bundle+json;version=0.1",
}

// VerifyBundle checks a Sigstore bundle against keys, offline, as
// sigstore-go's verifier does for a key-based DSSE bundle with no
// transparency log or timestamps (verify.WithKey,
// verify.WithArtifactDigest, verify.WithNoObserverTimestamps): the
// bundle's one DSSE signature by the key its hint names, over an in-toto
// statement with a subject whose sha256 is digest. It returns the key
// that signed. The tests check that sigstore-go v1.3.0 agrees.
func VerifyBundle(data []byte, digest string, keys []Key) (Key, error) {
	hexDigest, err := sha256Hex(digest)
	if err != nil {
		return Key{}, err
	}
	if len(data) > maxBundle {
		return Key{}, fmt.Errorf("%w: a bundle of %d bytes", ErrBadSignature, len(data))
	}
	var b bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return Key{}, fmt.Errorf("%w: not a Sigstore bundle: %v", ErrBadSignature, err)
	}
	if !contains(bundleMediaTypes, b.MediaType) {
		return Key{}, fmt.Errorf("%w: bundle media type %q", ErrBadSignature, b.MediaType)
	}
	vm := b.VerificationMaterial
	if vm.PublicKey == nil || vm.PublicKey.Hint == "" {
		return Key{}, fmt.Errorf("%w: the bundle names no public key (a certificate-based, keyless bundle is not checked offline)", ErrUntrustedSigner)
	}
	var signer *Key
	for i, k := range keys {
		if k.pub != nil && k.Fingerprint == vm.PublicKey.Hint {
			signer = &keys[i]
			break
		}
	}
	if signer == nil {
		return Key{}, fmt.Errorf("%w: signed with the key %s", ErrUntrustedSigner, vm.PublicKey.Hint)
	}
	env := b.DSSEEnvelope
	switch {
	case env == nil:
		return Key{}, fmt.Errorf("%w: by %s: the bundle holds no DSSE envelope (a message signature is not a skill signature)", ErrBadSignature, signer)
	case len(env.Signatures) != 1:
		return Key{}, fmt.Errorf("%w: by %s: %d signatures in the envelope, want 1", ErrBadSignature, signer, len(env.Signatures))
	case !verifySig(signer.pub, pae(env.PayloadType, env.Payload), env.Signatures[0].Sig):
		return Key{}, fmt.Errorf("%w: by %s: the DSSE signature does not match the key", ErrBadSignature, signer)
	case env.PayloadType != InTotoPayloadType:
		return Key{}, fmt.Errorf("%w: by %s: payload type %q, want %s", ErrBadSignature, signer, env.PayloadType, InTotoPayloadType)
	}
	var st statement
	if err := json.Unmarshal(env.Payload, &st); err != nil {
		return Key{}, fmt.Errorf("%w: by %s: the payload is not an in-toto statement: %v", ErrBadSignature, signer, err)
	}
	if len(st.Subject) > maxSubjects {
		return Key{}, fmt.Errorf("%w: by %s: %d subjects", ErrBadSignature, signer, len(st.Subject))
	}
	for _, s := range st.Subject {
		if strings.EqualFold(s.Digest["sha256"], hexDigest) {
			return *signer, nil
		}
	}
	return Key{}, fmt.Errorf("%w: by %s: signed for another artifact, not %s", ErrBadSignature, signer, digest)
}

func verifySig(pub any, msg, sig []byte) bool {
	switch p := pub.(type) {
	case ed25519.PublicKey:
		return ed25519.Verify(p, msg, sig)
	case *ecdsa.PublicKey:
		h, err := hashFor(p)
		if err != nil {
			return false
		}
		d := h.New()
		d.Write(msg)
		return ecdsa.VerifyASN1(p, d.Sum(nil), sig)
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func sha256Hex(digest string) (string, error) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if _, err := hex.DecodeString(h); !ok || err != nil || len(h) != 64 {
		return "", errors.New("a digest must be sha256:<64 hex digits>, got " + digest)
	}
	return h, nil
}
