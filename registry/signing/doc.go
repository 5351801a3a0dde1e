// Package signing checks who signed a skill (SPEC §18): Sigstore bundles
// over an OCI artifact's manifest digest, and SSH or OpenPGP signatures
// on git commits and tags, against a policy of accepted signer keys.
//
// Everything here is offline: a key is a public key the user listed, a
// signature is checked with it and nothing else (no Fulcio certificate,
// no transparency log, no key server).
package signing
