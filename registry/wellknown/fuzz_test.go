package wellknown

import (
	"archive/tar"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

// FuzzParse: any index either parses into skills whose names, paths and
// URLs hold what Parse promises, or is ErrBadIndex; it never panics.
func FuzzParse(f *testing.F) {
	d := "sha256:" + strings.Repeat("a", 64)
	f.Add([]byte(`{"$schema":"` + SchemaV2 + `","skills":[{"name":"pdf","type":"skill-md","description":"PDFs","url":"pdf/SKILL.md","digest":"` + d + `"}]}`))
	f.Add([]byte(`{"$schema":"` + SchemaV2 + `","skills":[{"name":"pdf","type":"archive","description":"x","url":"//evil/../a","digest":"` + d + `"}]}`))
	f.Add([]byte(`{"skills":[{"name":"pdf","description":"PDFs","files":["SKILL.md","scripts/a.py"]}]}`))
	f.Add([]byte(`{"skills":[{"name":"a","description":"x","files":["SKILL.md","../b"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, _, err := Parse(data, indexURL)
		if err != nil {
			return
		}
		for _, s := range idx.Skills {
			if checkName(s.Name) != nil {
				t.Fatalf("name %q accepted", s.Name)
			}
			if _, err := url.Parse(s.URL); err != nil {
				t.Fatalf("url %q accepted: %v", s.URL, err)
			}
			switch s.Type {
			case TypeSkillMD, TypeArchive:
				if !digestRE.MatchString(s.Digest) {
					t.Fatalf("digest %q accepted", s.Digest)
				}
			case TypeFiles:
				for _, p := range s.Files {
					if checkPath(p) != nil {
						t.Fatalf("path %q accepted", p)
					}
				}
			default:
				t.Fatalf("type %q accepted", s.Type)
			}
		}
	})
}

// FuzzUnpack: whatever the archive, every file unpacked sits inside the
// skill folder, links stay inside it, and the limits hold.
func FuzzUnpack(f *testing.F) {
	t := &testing.T{}
	f.Add(rawTar(t, &tar.Header{Name: "SKILL.md", Uname: "x"}, &tar.Header{Name: "a/b", Typeflag: tar.TypeSymlink, Linkname: "../SKILL.md"}))
	f.Add(rawZip(t, "SKILL.md", "ref/a.md"))
	f.Fuzz(func(t *testing.T, b []byte) {
		files, err := Unpack(b, 4096, 8192)
		if err != nil {
			return
		}
		var total int
		for p, file := range files {
			if checkPath(p) != nil {
				t.Fatalf("path %q unpacked", p)
			}
			if file.Mode&fs.ModeSymlink != 0 && !linkInside(p, string(file.Data)) {
				t.Fatalf("link %s -> %q unpacked", p, file.Data)
			}
			total += len(file.Data)
		}
		if total > 8192 || len(files) > maxFiles {
			t.Fatalf("%d bytes in %d files unpacked", total, len(files))
		}
	})
}
