package wellknown

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"testing/fstest"

	"github.com/agentskills/agent/registry/gitsrc"
)

// ErrBadArchive is an archive that is neither a gzipped tar nor a zip,
// is damaged, or has no SKILL.md at its root.
var ErrBadArchive = errors.New("bad skill archive")

// Unpack reads a skill archive (tar.gz or zip, told apart by their first
// bytes) into memory: files by their path in the skill folder. It refuses
// paths outside the folder, hard links, links that leave the folder,
// devices and other special files, a path given twice, more than
// maxFiles entries, a file over maxFile bytes and more than maxTotal
// unpacked bytes in all, counted as the bytes come out of the
// decompressor, whatever the headers claim.
func Unpack(b []byte, maxFile, maxTotal int64) (map[string]*fstest.MapFile, error) {
	u := unpacker{files: map[string]*fstest.MapFile{}, maxFile: maxFile, left: maxTotal}
	var err error
	switch {
	case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
		err = u.tarGz(b)
	case len(b) >= 2 && b[0] == 'P' && b[1] == 'K':
		err = u.zip(b)
	default:
		err = fmt.Errorf("%w: neither a gzipped tar nor a zip", ErrBadArchive)
	}
	if err != nil {
		return nil, err
	}
	for p := range u.files {
		// A file under another file or a link would be written through it.
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := u.files[d]; ok {
				return nil, fmt.Errorf("%w: %s is under %s, which is not a folder", ErrUnsafePath, p, d)
			}
		}
	}
	if _, ok := u.files["SKILL.md"]; !ok {
		if _, ok := u.files["skill.md"]; !ok {
			return nil, fmt.Errorf("%w: no SKILL.md at its root", ErrBadArchive)
		}
	}
	return u.files, nil
}

type unpacker struct {
	files   map[string]*fstest.MapFile
	maxFile int64
	left    int64
}

func (u *unpacker) add(name string, mode fs.FileMode, r io.Reader) error {
	p, err := cleanArchivePath(name)
	if err != nil {
		return err
	}
	if _, dup := u.files[p]; dup {
		return fmt.Errorf("%w: %q appears twice", ErrBadArchive, p)
	}
	if len(u.files) >= maxFiles {
		return fmt.Errorf("%w: more than %d files", gitsrc.ErrTooLarge, maxFiles)
	}
	max := min(u.maxFile, u.left)
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrBadArchive, p, err)
	}
	if int64(len(data)) > max {
		if max == u.maxFile {
			return fmt.Errorf("%w: %s is over %d bytes", gitsrc.ErrTooLarge, p, u.maxFile)
		}
		return fmt.Errorf("%w: the archive unpacks to more than the skill limit", gitsrc.ErrTooLarge)
	}
	u.left -= int64(len(data))
	if mode&fs.ModeSymlink != 0 && !linkInside(p, string(data)) {
		return fmt.Errorf("%w: the link %s points to %q, outside the skill folder", ErrUnsafePath, p, data)
	}
	u.files[p] = &fstest.MapFile{Data: data, Mode: mode}
	return nil
}

func fileMode(exec bool) fs.FileMode {
	if exec {
		return 0o755
	}
	return 0o644
}

func (u *unpacker) tarGz(b []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadArchive, err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if _, err := cleanArchivePath(h.Name); err != nil && h.Name != "./" && h.Name != "." {
				return err
			}
		case tar.TypeReg, tar.TypeRegA:
			if err := u.add(h.Name, fileMode(h.Mode&0o111 != 0), tr); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := u.add(h.Name, fs.ModeSymlink|0o777, bytes.NewReader([]byte(h.Linkname))); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader:
		default:
			return fmt.Errorf("%w: %s is a %s, and a skill holds only files, folders and links inside it", ErrUnsafePath, h.Name, typeName(h.Typeflag))
		}
	}
}

func typeName(t byte) string {
	switch t {
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "FIFO"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}

func (u *unpacker) zip(b []byte) error {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadArchive, err)
	}
	if len(zr.File) > maxFiles {
		return fmt.Errorf("%w: more than %d files", gitsrc.ErrTooLarge, maxFiles)
	}
	for _, f := range zr.File {
		m := f.Mode()
		if m.IsDir() {
			if _, err := cleanArchivePath(f.Name); err != nil {
				return err
			}
			continue
		}
		if !m.IsRegular() && m&fs.ModeSymlink == 0 {
			return fmt.Errorf("%w: %s is not a file, folder or link", ErrUnsafePath, f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadArchive, f.Name, err)
		}
		mode := fileMode(m&0o111 != 0)
		if m&fs.ModeSymlink != 0 {
			mode = fs.ModeSymlink | 0o777
		}
		err = u.add(f.Name, mode, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
