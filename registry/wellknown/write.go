package wellknown

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"sort"
)

// Entry is one skill of a v0.2 index as it is served.
type Entry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	URL         string `json:"url"`
	Digest      string `json:"digest"`
}

// Document is a v0.2 index as it is served.
type Document struct {
	Schema string  `json:"$schema"`
	Skills []Entry `json:"skills"`
}

// Marshal encodes a v0.2 index of entries.
func Marshal(entries []Entry) ([]byte, error) {
	if entries == nil {
		entries = []Entry{}
	}
	return json.MarshalIndent(Document{Schema: SchemaV2, Skills: entries}, "", "  ")
}

// Digest is the digest an index gives for an artifact of bytes b.
func Digest(b []byte) string { return "sha256:" + sum(b) }

// File is one file of an archive that TarGz writes.
type File struct {
	Path string // slash path inside the skill folder
	Data []byte
	Mode fs.FileMode // 0o755 for an executable; fs.ModeSymlink with Data the target
}

// TarGz writes a skill's files as a gzipped tar, in path order with
// fixed times and owners, so the same files give the same digest.
func TarGz(files []File) ([]byte, error) {
	files = append([]File(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.Path, Mode: 0o644, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		switch {
		case f.Mode&fs.ModeSymlink != 0:
			h.Typeflag, h.Linkname, h.Size, h.Mode = tar.TypeSymlink, string(f.Data), 0, 0o777
		case f.Mode&0o111 != 0:
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
