package ocisrc

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// Media types of a skill artifact (see the package comment).
const (
	ArtifactType    = "application/vnd.agentskills.skill.v1"
	ConfigMediaType = "application/vnd.agentskills.skill.config.v1+json"
	FileMediaType   = "application/vnd.agentskills.skill.file.v1"

	// AnnotationPath holds a file layer's slash path in the skill folder.
	AnnotationPath = "org.opencontainers.image.title"
	// AnnotationExecutable is "true" on a file layer whose file is
	// executable (scripts); other modes are not kept, as in git.
	AnnotationExecutable = "vnd.agentskills.skill.file.executable"
)

// Limits on what Pull accepts from a registry.
const (
	maxManifestBytes = 4 << 20
	maxConfigBytes   = 1 << 20
	maxFiles         = 20000
	// MaxArtifactBytes bounds the files of one skill: they are held in
	// memory between the check and the install.
	MaxArtifactBytes = 512 << 20
)

// Config is the config blob of a skill artifact.
type Config struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// H1 is the skill folder's h1: hash (golang.org/x/mod/sumdb/dirhash).
	H1 string `json:"h1"`
	// Origin is where a mirrored skill came from; nil for a published one.
	Origin *Origin `json:"origin,omitempty"`
}

// Origin is the git source a mirror artifact holds a skill of.
type Origin struct {
	Source string `json:"source"`         // the repository URL
	Path   string `json:"path,omitempty"` // the skill's folder in it; "" is the root
	Commit string `json:"commit"`         // the full commit SHA
}

// File is one pulled file of a skill.
type File struct {
	Path       string // slash path in the skill folder
	Data       []byte
	Executable bool
	Digest     string // sha256:<hex>, checked
}

// Artifact is a pulled, checked skill artifact.
type Artifact struct {
	Ref    Reference // with the digest
	Config Config
	Files  []File // in path order
	// Manifest is the manifest's bytes, whose sha256 is Ref.Digest;
	// signatures sign it.
	Manifest []byte
	// Annotations are the manifest's (publish writes the skill's name and
	// version there), so a signature covers them.
	Annotations map[string]string
}

// SignedVersion is the version the manifest records (its
// org.opencontainers.image.version annotation, else the config's): what
// a signature of the manifest vouches for, "" when it names none.
func (a *Artifact) SignedVersion() string {
	if v := a.Annotations[ocispec.AnnotationVersion]; v != "" {
		return v
	}
	return a.Config.Version
}

// H1 computes the h1: hash (dirhash.Hash1) of files given each one's
// sha256: the sha256 of the lines "<hex sum>  <path>\n" in path order,
// base64-encoded. It is dirhash's definition, computed here from layer
// digests, so that an artifact's hash is known without its files.
func H1(sums map[string]string) (string, error) {
	names := make([]string, 0, len(sums))
	for n := range sums {
		if strings.Contains(n, "\n") {
			return "", fmt.Errorf("file name %q contains a newline", n)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s  %s\n", sums[n], n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// validPath reports whether p may name a file of a skill folder: a slash
// path inside it, never .git or a parent.
func validPath(p string) bool {
	if !fs.ValidPath(p) || p == "." || strings.Contains(p, "\\") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".git" {
			return false
		}
	}
	return path.Clean(p) == p
}

// limited reads at most n bytes from r, failing past them.
func readLimited(r io.Reader, n int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, n+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > n {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, what, n)
	}
	return b, nil
}
