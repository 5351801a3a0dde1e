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
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"
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
	inTotoPayload = "application/vnd.in-toto+json"
	maxBundle     = 1 << 20
)

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

// SignBundle signs digest (sha256:<hex>, an artifact's manifest digest)
// with key: a Sigstore bundle (v0.3, JSON) holding a DSSE envelope over
// an in-toto statement whose subject is name at digest, and a public-key
// hint (the key's fingerprint) as its verification material. No
// certificate and no transparency log: it is checked offline against a
// listed public key (VerifyBundle).
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
	pae := fmt.Appendf(nil, "DSSEv1 %d %s %d %s", len(inTotoPayload), inTotoPayload, len(payload), payload)
	var sig []byte
	switch p := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(p, pae)
	case *ecdsa.PrivateKey:
		h, _ := hashFor(&p.PublicKey)
		d := h.New()
		d.Write(pae)
		if sig, err = ecdsa.SignASN1(rand.Reader, p, d.Sum(nil)); err != nil {
			return nil, fmt.Errorf("sign: %w", err)
		}
	default:
		return nil, fmt.Errorf("%w: a %T key; sign with an ed25519 or ECDSA key", ErrKey, key)
	}
	b := &protobundle.Bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: k.Fingerprint}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: payload, PayloadType: inTotoPayload,
			Signatures: []*protodsse.Signature{{Sig: sig, Keyid: k.Fingerprint}},
		}},
	}
	return protojson.Marshal(b)
}

// VerifyBundle checks a Sigstore bundle with sigstore-go against keys,
// offline: its signature by one of them (the one its hint names) over a
// statement whose subject is digest. It returns the key that signed.
func VerifyBundle(data []byte, digest string, keys []Key) (Key, error) {
	hexDigest, err := sha256Hex(digest)
	if err != nil {
		return Key{}, err
	}
	raw, _ := hex.DecodeString(hexDigest)
	if len(data) > maxBundle {
		return Key{}, fmt.Errorf("%w: a bundle of %d bytes", ErrBadSignature, len(data))
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return Key{}, fmt.Errorf("%w: not a Sigstore bundle: %v", ErrBadSignature, err)
	}
	hint := b.GetVerificationMaterial().GetPublicKey().GetHint()
	if hint == "" {
		return Key{}, fmt.Errorf("%w: the bundle names no public key (a certificate-based, keyless bundle is not checked offline)", ErrUntrustedSigner)
	}
	var signer *Key
	for i, k := range keys {
		if k.pub != nil && k.Fingerprint == hint {
			signer = &keys[i]
			break
		}
	}
	if signer == nil {
		return Key{}, fmt.Errorf("%w: signed with the key %s", ErrUntrustedSigner, hint)
	}
	h := crypto.SHA256
	if p, ok := signer.pub.(*ecdsa.PublicKey); ok {
		h, _ = hashFor(p)
	}
	sv, err := signature.LoadVerifier(signer.pub, h)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrKey, err)
	}
	tm := root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{hint: root.NewExpiringKey(sv, timeZero, timeZero)})
	v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		return Key{}, err
	}
	if _, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithKey())); err != nil {
		return Key{}, fmt.Errorf("%w: by %s: %v", ErrBadSignature, signer, err)
	}
	return *signer, nil
}

func sha256Hex(digest string) (string, error) {
	h, ok := strings.CutPrefix(digest, "sha256:")
	if _, err := hex.DecodeString(h); !ok || err != nil || len(h) != 64 {
		return "", errors.New("a digest must be sha256:<64 hex digits>, got " + digest)
	}
	return h, nil
}

// timeZero leaves a listed key's validity open at both ends: the policy,
// not a date, says whether it is accepted.
var timeZero time.Time
