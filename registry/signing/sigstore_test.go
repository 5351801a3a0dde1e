package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
)

func newKey(t *testing.T, kind string) (crypto.Signer, Key) {
	t.Helper()
	var priv crypto.Signer
	switch kind {
	case "ed25519":
		_, p, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		priv = p
	case "p256", "p384":
		c := elliptic.P256()
		if kind == "p384" {
			c = elliptic.P384()
		}
		p, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		priv = p
	}
	// Through PEM both ways, as files hold them.
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	priv, err = ParsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	k, err := ParseKey(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	if err != nil {
		t.Fatal(err)
	}
	return priv, k
}

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestBundle(t *testing.T) {
	for _, kind := range []string{"ed25519", "p256", "p384"} {
		t.Run(kind, func(t *testing.T) {
			priv, pub := newKey(t, kind)
			_, other := newKey(t, kind)
			b, err := SignBundle(priv, "oci://127.0.0.1:5000/team/hello", digest)
			if err != nil {
				t.Fatal(err)
			}
			got, err := VerifyBundle(b, digest, []Key{other, pub})
			if err != nil {
				t.Fatalf("VerifyBundle: %v\n%s", err, b)
			}
			if got.Fingerprint != pub.Fingerprint {
				t.Errorf("signed by %s, want %s", got.Fingerprint, pub.Fingerprint)
			}
			if _, err := VerifyBundle(b, digest, []Key{other}); !errors.Is(err, ErrUntrustedSigner) {
				t.Errorf("another key: %v, want ErrUntrustedSigner", err)
			}
			otherDigest := "sha256:" + strings.Repeat("f", 64)
			if _, err := VerifyBundle(b, otherDigest, []Key{pub}); !errors.Is(err, ErrBadSignature) {
				t.Errorf("another artifact: %v, want ErrBadSignature", err)
			}
			// A bundle whose hint names the listed key but whose
			// signature is another key's is refused by the signature.
			forged, err := SignBundle(priv, "x", digest)
			if err != nil {
				t.Fatal(err)
			}
			forgedHint := strings.ReplaceAll(string(forged), pub.Fingerprint, other.Fingerprint)
			if _, err := VerifyBundle([]byte(forgedHint), digest, []Key{other}); !errors.Is(err, ErrBadSignature) {
				t.Errorf("a hint naming another key: %v, want ErrBadSignature", err)
			}
		})
	}
}
