package signing

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// sigstoreVerify is sigstore-go v1.3.0's offline check of a key-based
// bundle: trusted material made of the public key under its hint, no
// transparency log, no timestamps, the artifact given by its digest.
func sigstoreVerify(t *testing.T, data []byte, digest string, k Key) error {
	t.Helper()
	var b sgbundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return err
	}
	h := crypto.SHA256
	if p, ok := k.pub.(*ecdsa.PublicKey); ok {
		h, _ = hashFor(p)
	}
	sv, err := signature.LoadVerifier(k.pub, h)
	if err != nil {
		t.Fatal(err)
	}
	open := root.NewExpiringKey(sv, time.Time{}, time.Time{})
	tm := root.NewTrustedPublicKeyMaterialFromMapping(map[string]*root.ExpiringKey{k.Fingerprint: open})
	v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	_, err = v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", raw), verify.WithKey()))
	return err
}

// TestSigstoreGoAgrees: what SignBundle makes, sigstore-go v1.3.0
// verifies offline against the public key, and refuses for another
// artifact or another key; what sigstore-go's own signer makes with the
// same key, VerifyBundle accepts.
func TestSigstoreGoAgrees(t *testing.T) {
	for _, kind := range []string{"ed25519", "p256", "p384"} {
		t.Run(kind, func(t *testing.T) {
			priv, pub := newKey(t, kind)
			_, other := newKey(t, kind)
			b, err := SignBundle(priv, "oci://127.0.0.1:5000/team/hello", digest)
			if err != nil {
				t.Fatal(err)
			}
			if err := sigstoreVerify(t, b, digest, pub); err != nil {
				t.Fatalf("sigstore-go refuses SignBundle's bundle: %v\n%s", err, b)
			}
			if err := sigstoreVerify(t, b, "sha256:"+strings.Repeat("e", 64), pub); err == nil {
				t.Error("sigstore-go accepted the bundle for another artifact")
			}
			forged := strings.ReplaceAll(string(b), pub.Fingerprint, other.Fingerprint)
			if err := sigstoreVerify(t, []byte(forged), digest, other); err == nil {
				t.Error("sigstore-go accepted another key's signature")
			}

			kp := &keypair{priv: priv, pub: pub}
			st := `{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"x","digest":{"sha256":"` + strings.TrimPrefix(digest, "sha256:") + `"}}],"predicateType":"` + PredicateType + `","predicate":{}}`
			pb, err := sign.Bundle(&sign.DSSEData{Data: []byte(st), PayloadType: InTotoPayloadType}, kp, sign.BundleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			made, err := (&sgbundle.Bundle{Bundle: pb}).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := VerifyBundle(made, digest, []Key{pub}); err != nil {
				t.Fatalf("VerifyBundle refuses sigstore-go's bundle: %v\n%s", err, made)
			}
		})
	}
}

// keypair is sign.Keypair over a key of ours, so that sigstore-go's
// signer makes a bundle with it.
type keypair struct {
	priv crypto.Signer
	pub  Key
}

func (k *keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	if p, ok := k.pub.pub.(*ecdsa.PublicKey); ok {
		switch h, _ := hashFor(p); h {
		case crypto.SHA384:
			return protocommon.HashAlgorithm_SHA2_384
		case crypto.SHA512:
			return protocommon.HashAlgorithm_SHA2_512
		}
	}
	return protocommon.HashAlgorithm_SHA2_256
}

func (k *keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	switch p := k.pub.pub.(type) {
	case ed25519.PublicKey:
		return protocommon.PublicKeyDetails_PKIX_ED25519
	case *ecdsa.PublicKey:
		switch p.Curve.Params().BitSize {
		case 384:
			return protocommon.PublicKeyDetails_PKIX_ECDSA_P384_SHA_384
		case 521:
			return protocommon.PublicKeyDetails_PKIX_ECDSA_P521_SHA_512
		}
	}
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

func (k *keypair) GetHint() []byte { return []byte(k.pub.Fingerprint) }

func (k *keypair) GetKeyAlgorithm() string {
	if _, ok := k.pub.pub.(ed25519.PublicKey); ok {
		return "ED25519"
	}
	return "ECDSA"
}

func (k *keypair) GetPublicKey() crypto.PublicKey { return k.pub.pub }

func (k *keypair) GetPublicKeyPem() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(k.pub.pub)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

func (k *keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	if p, ok := k.priv.(ed25519.PrivateKey); ok {
		return ed25519.Sign(p, data), data, nil
	}
	p := k.priv.(*ecdsa.PrivateKey)
	h, _ := hashFor(&p.PublicKey)
	d := h.New()
	d.Write(data)
	sum := d.Sum(nil)
	sig, err := ecdsa.SignASN1(rand.Reader, p, sum)
	return sig, sum, err
}
