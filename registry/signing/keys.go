package signing

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"golang.org/x/crypto/ssh"
)

// Key is a signer's public key: an ed25519 or ECDSA key (from an SSH
// authorized_keys line or a PEM "PUBLIC KEY"), which checks Sigstore
// bundles and SSH signatures alike, or an OpenPGP key, which checks GPG
// signatures on git commits and tags.
type Key struct {
	// Fingerprint names the key as ssh-keygen -l does (SHA256:…) for an
	// ed25519 or ECDSA key, and as gpg does (40 hex digits) for an
	// OpenPGP one.
	Fingerprint string
	// Comment is the authorized_keys comment or the OpenPGP user id.
	Comment string

	pub crypto.PublicKey // ed25519.PublicKey or *ecdsa.PublicKey; nil for OpenPGP
	ssh ssh.PublicKey    // the same key in SSH form; nil for OpenPGP
	pgp openpgp.EntityList
}

// String is the fingerprint and the comment.
func (k Key) String() string {
	if k.Comment == "" {
		return k.Fingerprint
	}
	return k.Fingerprint + " (" + k.Comment + ")"
}

// PGP reports whether k is an OpenPGP key.
func (k Key) PGP() bool { return k.pgp != nil }

const (
	pgpPublicBlock  = "-----BEGIN PGP PUBLIC KEY BLOCK-----"
	pgpPrivateBlock = "-----BEGIN PGP PRIVATE KEY BLOCK-----"
	maxKeyBytes     = 1 << 20
)

// ParseKey reads a public key: one authorized_keys line (ssh-ed25519 or
// ecdsa-sha2-*), a PEM "PUBLIC KEY" block (PKIX, ed25519 or ECDSA), or an
// armored OpenPGP public key block. A private key is refused: the policy
// lists public keys only.
func ParseKey(data []byte) (Key, error) {
	if len(data) > maxKeyBytes {
		return Key{}, fmt.Errorf("%w: larger than %d bytes", ErrKey, maxKeyBytes)
	}
	text := bytes.TrimSpace(data)
	switch {
	case len(text) == 0:
		return Key{}, fmt.Errorf("%w: empty; give an SSH public key line (ssh-ed25519 AAAA…), a PEM PUBLIC KEY or an armored PGP public key", ErrKey)
	case bytes.HasPrefix(text, []byte(pgpPrivateBlock)), bytes.Contains(text, []byte("PRIVATE KEY-----")):
		return Key{}, fmt.Errorf("%w: this is a private key; give the public key (for SSH the .pub file, for OpenPGP gpg --export --armor)", ErrKey)
	case bytes.HasPrefix(text, []byte(pgpPublicBlock)):
		return parsePGP(text)
	case bytes.HasPrefix(text, []byte("-----BEGIN ")):
		return parsePEM(text)
	}
	pub, comment, _, rest, err := ssh.ParseAuthorizedKey(text)
	if err != nil {
		return Key{}, fmt.Errorf("%w: not an SSH public key line, PEM PUBLIC KEY or armored PGP public key: %v", ErrKey, err)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return Key{}, fmt.Errorf("%w: more than one key; give one key per signer", ErrKey)
	}
	return fromSSH(pub, comment)
}

func parsePEM(text []byte) (Key, error) {
	b, rest := pem.Decode(text)
	if b == nil {
		return Key{}, fmt.Errorf("%w: a damaged PEM block", ErrKey)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		return Key{}, fmt.Errorf("%w: more than one PEM block; give one key per signer", ErrKey)
	}
	if b.Type != "PUBLIC KEY" {
		return Key{}, fmt.Errorf("%w: a PEM %q block; give a PUBLIC KEY (openssl pkey -pubout)", ErrKey, b.Type)
	}
	pub, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return FromPublic(pub)
}

// FromPublic makes a Key of an ed25519 or ECDSA public key.
func FromPublic(pub crypto.PublicKey) (Key, error) {
	switch p := pub.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if _, err := hashFor(p); err != nil {
			return Key{}, err
		}
	default:
		return Key{}, fmt.Errorf("%w: a %T key; signers use ed25519 or ECDSA keys", ErrKey, pub)
	}
	s, err := ssh.NewPublicKey(pub)
	if err != nil {
		return Key{}, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return Key{Fingerprint: ssh.FingerprintSHA256(s), pub: pub, ssh: s}, nil
}

func fromSSH(pub ssh.PublicKey, comment string) (Key, error) {
	cp, ok := pub.(ssh.CryptoPublicKey)
	if !ok {
		return Key{}, fmt.Errorf("%w: an SSH %s key; signers use ssh-ed25519 or ecdsa-sha2-* keys (security keys, sk-*, are not supported)", ErrKey, pub.Type())
	}
	k, err := FromPublic(cp.CryptoPublicKey())
	if err != nil {
		return Key{}, err
	}
	k.Comment = comment
	return k, nil
}

func parsePGP(text []byte) (Key, error) {
	el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(text))
	if err != nil {
		return Key{}, fmt.Errorf("%w: OpenPGP: %v", ErrKey, err)
	}
	if len(el) != 1 {
		return Key{}, fmt.Errorf("%w: %d OpenPGP keys in one block; give one key per signer", ErrKey, len(el))
	}
	e := el[0]
	if e.PrivateKey != nil {
		return Key{}, fmt.Errorf("%w: this is a private key; give the public key (gpg --export --armor)", ErrKey)
	}
	k := Key{Fingerprint: strings.ToUpper(fmt.Sprintf("%x", e.PrimaryKey.Fingerprint)), pgp: el}
	for name := range e.Identities {
		if k.Comment == "" || name < k.Comment {
			k.Comment = name
		}
	}
	return k, nil
}

// ParsePrivateKey reads an ed25519 or ECDSA private key to sign with: PEM
// PKCS#8 ("PRIVATE KEY"), SEC 1 ("EC PRIVATE KEY") or an unencrypted
// OpenSSH private key.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	if len(data) > maxKeyBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrKey, maxKeyBytes)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		if _, err := ParseKey(data); err == nil {
			return nil, fmt.Errorf("%w: this is a public key; signing needs the private key", ErrKey)
		}
		return nil, fmt.Errorf("%w: not a PEM private key (PKCS#8, EC or OpenSSH)", ErrKey)
	}
	var (
		priv any
		err  error
	)
	switch b.Type {
	case "PRIVATE KEY":
		priv, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		priv, err = x509.ParseECPrivateKey(b.Bytes)
	case "OPENSSH PRIVATE KEY":
		priv, err = ssh.ParseRawPrivateKey(data)
		if _, ok := err.(*ssh.PassphraseMissingError); ok {
			return nil, fmt.Errorf("%w: the OpenSSH key is encrypted; give an unencrypted copy (ssh-keygen -p -N '' -f COPY) or a PKCS#8 key", ErrKey)
		}
	case "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("%w: the key is encrypted; give an unencrypted PKCS#8 key (openssl pkcs8 -topk8 -nocrypt)", ErrKey)
	case "PUBLIC KEY":
		return nil, fmt.Errorf("%w: this is a public key; signing needs the private key", ErrKey)
	default:
		return nil, fmt.Errorf("%w: a PEM %q block; give an ed25519 or ECDSA private key", ErrKey, b.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	switch p := priv.(type) {
	case ed25519.PrivateKey:
		return p, nil
	case *ed25519.PrivateKey:
		return *p, nil
	case *ecdsa.PrivateKey:
		if _, err := hashFor(&p.PublicKey); err != nil {
			return nil, err
		}
		return p, nil
	}
	return nil, fmt.Errorf("%w: a %T key; sign with an ed25519 or ECDSA key", ErrKey, priv)
}

// hashFor is the hash an ECDSA key signs with: SHA-256 for P-256, SHA-384
// for P-384, SHA-512 for P-521, as Sigstore's key details pair them.
func hashFor(p *ecdsa.PublicKey) (crypto.Hash, error) {
	switch p.Curve.Params().BitSize {
	case 256:
		return crypto.SHA256, nil
	case 384:
		return crypto.SHA384, nil
	case 521:
		return crypto.SHA512, nil
	}
	return 0, fmt.Errorf("%w: ECDSA on %s; use P-256, P-384 or P-521", ErrKey, p.Curve.Params().Name)
}
