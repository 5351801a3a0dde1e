package signing

import (
	"crypto/ed25519"
	"errors"
	"testing"
)

// FuzzParseKey: any input is a key or an ErrKey, never a panic; a key
// has a fingerprint and reads back the same from its SSH form.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl team@example.com",
		"-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n",
		"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxjMEZ\n-----END PGP PUBLIC KEY BLOCK-----\n",
		"-----BEGIN OPENSSH PRIVATE KEY-----\n", "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ", "", "\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKey(b)
		if err != nil {
			if !errors.Is(err, ErrKey) {
				t.Fatalf("ParseKey: %v is not an ErrKey", err)
			}
			return
		}
		if k.Fingerprint == "" {
			t.Fatalf("a key without a fingerprint: %+v", k)
		}
		if k.ssh != nil {
			back, err := fromSSH(k.ssh, "")
			if err != nil || back.Fingerprint != k.Fingerprint {
				t.Fatalf("SSH form reads back as %+v, %v", back, err)
			}
		}
	})
}

// FuzzVerifyBundle: a bundle that is not signed by the listed key is
// refused with one of the sentinels, never accepted, never a panic.
func FuzzVerifyBundle(f *testing.F) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	k, _ := FromPublic(pub)
	_, other, _ := ed25519.GenerateKey(nil)
	good, _ := SignBundle(priv, "x", digest)
	bad, _ := SignBundle(other, "x", digest)
	f.Add(good)
	f.Add(bad)
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"` + k.Fingerprint + `"}},"dsseEnvelope":{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[{"sig":"AA=="}]}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := VerifyBundle(b, digest, []Key{k})
		if err == nil {
			// Only a bundle the key signed for this digest verifies.
			if got.Fingerprint != k.Fingerprint {
				t.Fatalf("accepted with %s", got.Fingerprint)
			}
			return
		}
		if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrUntrustedSigner) {
			t.Fatalf("VerifyBundle: %v is neither ErrBadSignature nor ErrUntrustedSigner", err)
		}
	})
}

// FuzzCovers: a prefix covers only sources that start with it.
func FuzzCovers(f *testing.F) {
	f.Add("https://h/team", "https://h/team-other")
	f.Add("oci://r/team/", "oci://r/team/x")
	f.Fuzz(func(t *testing.T, prefix, source string) {
		if covers(prefix, source) && len(source) < len(prefix) {
			t.Fatalf("covers(%q, %q) with a shorter source", prefix, source)
		}
	})
}
