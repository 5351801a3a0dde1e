package signing

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// GitNamespace is the sshsig namespace git signs commits and tags in.
const GitNamespace = "git"

const (
	sshSignatureBlock = "-----BEGIN SSH SIGNATURE-----"
	pgpSignatureBlock = "-----BEGIN PGP SIGNATURE-----"
)

// GitObject is a signed git object: a commit or an annotated tag, its
// bytes without the signature (what was signed) and the armored
// signature ("" when it has none).
type GitObject struct {
	Kind      string // "commit" or "tag"
	Hash      string
	Payload   []byte
	Signature string
}

// VerifyGit checks a commit's or tag's signature against keys: an SSH
// signature (sshsig, namespace git) by one of the ed25519 or ECDSA keys,
// or an OpenPGP one by one of the OpenPGP keys. It returns the key that
// signed.
func VerifyGit(obj GitObject, keys []Key) (Key, error) {
	what := obj.Kind + " " + short(obj.Hash)
	sig := strings.TrimSpace(obj.Signature)
	switch {
	case sig == "":
		return Key{}, fmt.Errorf("%s: %w", what, ErrUnsigned)
	case strings.HasPrefix(sig, sshSignatureBlock):
		return verifySSH(what, obj.Payload, []byte(sig), keys)
	case strings.HasPrefix(sig, pgpSignatureBlock):
		return verifyPGP(what, obj.Payload, sig, keys)
	}
	return Key{}, fmt.Errorf("%s: %w: neither an SSH nor an OpenPGP signature (X.509 signatures are not supported)", what, ErrBadSignature)
}

func verifySSH(what string, payload, armored []byte, keys []Key) (Key, error) {
	sig, err := sshsig.Unarmor(armored)
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w: %v", what, ErrBadSignature, err)
	}
	signer := ssh.FingerprintSHA256(sig.PublicKey)
	for _, k := range keys {
		if k.ssh == nil || !bytes.Equal(k.ssh.Marshal(), sig.PublicKey.Marshal()) {
			continue
		}
		if err := sshsig.Verify(bytes.NewReader(payload), sig, k.ssh, sig.HashAlgorithm, GitNamespace); err != nil {
			return Key{}, fmt.Errorf("%s: %w: SSH signature by %s: %v", what, ErrBadSignature, k, err)
		}
		return k, nil
	}
	return Key{}, fmt.Errorf("%s: %w: SSH signature by %s %s", what, ErrUntrustedSigner, sig.PublicKey.Type(), signer)
}

func verifyPGP(what string, payload []byte, armored string, keys []Key) (Key, error) {
	for _, k := range keys {
		if k.pgp == nil {
			continue
		}
		_, err := openpgp.CheckArmoredDetachedSignature(k.pgp, bytes.NewReader(payload), strings.NewReader(armored), nil)
		if err == nil {
			return k, nil
		}
		if !errors.Is(err, pgperrors.ErrUnknownIssuer) {
			return Key{}, fmt.Errorf("%s: %w: OpenPGP signature by %s: %v", what, ErrBadSignature, k, err)
		}
	}
	return Key{}, fmt.Errorf("%s: %w: OpenPGP signature by a key not listed%s", what, ErrUntrustedSigner, pgpIssuer(armored))
}

// pgpIssuer names the key an OpenPGP signature says it was made with.
func pgpIssuer(armored string) string {
	b, err := armor.Decode(strings.NewReader(armored))
	if err != nil {
		return ""
	}
	p, err := packet.Read(b.Body)
	if err != nil {
		return ""
	}
	sig, ok := p.(*packet.Signature)
	switch {
	case !ok:
		return ""
	case len(sig.IssuerFingerprint) > 0:
		return fmt.Sprintf(" (%X)", sig.IssuerFingerprint)
	case sig.IssuerKeyId != nil:
		return fmt.Sprintf(" (key id %016X)", *sig.IssuerKeyId)
	}
	return ""
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
