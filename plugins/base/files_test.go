package base

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3000)
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		many.WriteString("line\n")
	}
	w := newTestWS(t, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"crlf.txt":  "a\r\nb\r\n",
		"nonl.txt":  "last line without newline",
		"long.txt":  long + "\nshort\n",
		"many.txt":  many.String(),
		"empty.txt": "",
		"bin.dat":   "\x00\x01\x02binary",
		"img.png":   "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"latin1":    "caf\xe9\n",
		"dir/x":     "x\n",
	})
	tests := []struct {
		name    string
		args    map[string]any
		code    string
		content string // substring of the content
		total   int
		next    int
	}{
		{name: "whole file", args: map[string]any{"path": "a.txt"}, content: "L1: one\nL2: two\nL3: three\n", total: 3},
		{name: "offset and limit", args: map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, content: "L2: two\n", total: 3, next: 3},
		{name: "absolute inside", args: map[string]any{"path": filepath.Join(w.dir, "a.txt")}, content: "L1: one", total: 3},
		{name: "crlf", args: map[string]any{"path": "crlf.txt"}, content: "L1: a\nL2: b\n", total: 2},
		{name: "no final newline", args: map[string]any{"path": "nonl.txt"}, content: "L1: last line without newline\n", total: 1},
		{name: "long line cut", args: map[string]any{"path": "long.txt"}, content: "[... line cut at 2000 bytes]\nL2: short", total: 2},
		{name: "default limit 2000", args: map[string]any{"path": "many.txt"}, content: "L2000: line\n", total: 2500, next: 2001},
		{name: "empty", args: map[string]any{"path": "empty.txt"}, total: 0},
		{name: "offset past end", args: map[string]any{"path": "a.txt", "offset": 9}, code: CodeInvalidArgs},
		{name: "missing", args: map[string]any{"path": "nope.txt"}, code: CodeNotFound},
		{name: "folder", args: map[string]any{"path": "dir"}, code: CodeNotFound},
		{name: "binary", args: map[string]any{"path": "bin.dat"}, code: CodeNotText},
		{name: "image", args: map[string]any{"path": "img.png"}, code: CodeNotText},
		{name: "not utf-8", args: map[string]any{"path": "latin1"}, code: CodeNotText},
		{name: "outside", args: map[string]any{"path": "../x"}, code: CodePathOutside},
		{name: "empty path", args: map[string]any{"path": ""}, code: CodeInvalidArgs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ReadResult
			msg, code := w.call("read_file", tt.args, &r)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if code != "" {
				if msg == "" {
					t.Error("an error without a message")
				}
				return
			}
			if !strings.Contains(r.Content, tt.content) || r.TotalLines != tt.total || r.NextOffset != tt.next {
				t.Errorf("got content %.200q total %d next %d, want %q total %d next %d", r.Content, r.TotalLines, r.NextOffset, tt.content, tt.total, tt.next)
			}
		})
	}
	if _, code := w.call("read_file", map[string]any{"path": "img.png"}, nil); code != CodeNotText {
		t.Fatal(code)
	}
	msg, _ := w.call("read_file", map[string]any{"path": "img.png"}, nil)
	if !strings.Contains(msg, "read_image_file") {
		t.Errorf("an image read as text should point to read_image_file: %s", msg)
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{"old.sh": "#!/bin/sh\n", "dir/f": "x"})
	if err := os.Chmod(filepath.Join(w.dir, "old.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("old.sh", filepath.Join(w.dir, "link.sh")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, content, code string
		created                   bool
		file                      string // where the content must land
	}{
		{name: "new file", path: "new.txt", content: "hello\n", created: true, file: "new.txt"},
		{name: "creates parents", path: "a/b/c.txt", content: "deep", created: true, file: "a/b/c.txt"},
		{name: "replaces", path: "old.sh", content: "#!/bin/sh\necho hi\n", file: "old.sh"},
		{name: "through a link inside", path: "link.sh", content: "#!/bin/sh\necho via link\n", file: "old.sh"},
		{name: "empty content", path: "empty", content: "", created: true, file: "empty"},
		{name: "a folder", path: "dir", code: CodeInvalidArgs},
		{name: "the workspace", path: ".", code: CodeInvalidArgs},
		{name: "outside", path: "../escape.txt", code: CodePathOutside},
		{name: "absolute outside", path: "/tmp/agent-base-escape.txt", code: CodePathOutside},
		{name: "empty path", path: "", code: CodeInvalidArgs},
		{name: "state folder may be written", path: ".agent/notes", content: "n", created: true, file: ".agent/notes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r WriteResult
			msg, code := w.call("write_file", map[string]any{"path": tt.path, "content": tt.content}, &r)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if code != "" {
				return
			}
			if r.Created != tt.created || r.Bytes != len(tt.content) {
				t.Errorf("result %+v", r)
			}
			if got := w.read(tt.file); got != tt.content {
				t.Errorf("%s holds %q, want %q", tt.file, got, tt.content)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(w.dir, "old.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("replacing a file must keep its mode: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Lstat(filepath.Join(w.dir, "link.sh")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("writing through a link must keep the link: %v", err)
	}
	ents, _ := os.ReadDir(w.dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		args    map[string]any
		code    string
		want    string
		inMsg   string
	}{
		{name: "one match", content: "a\nb\nc\n", args: map[string]any{"old_text": "b\n", "new_text": "B\n"}, want: "a\nB\nc\n"},
		{name: "multi-line", content: "func f() {\n\treturn 1\n}\n", args: map[string]any{"old_text": "\treturn 1\n}", "new_text": "\treturn 2\n}"}, want: "func f() {\n\treturn 2\n}\n"},
		{name: "crlf file, lf old_text", content: "a\r\nb\r\nc\r\n", args: map[string]any{"old_text": "a\nb", "new_text": "x\ny"}, want: "x\r\ny\r\nc\r\n"},
		{name: "crlf old_text", content: "a\nb\n", args: map[string]any{"old_text": "a\r\nb", "new_text": "z"}, want: "z\n"},
		{name: "delete text", content: "keep drop keep", args: map[string]any{"old_text": " drop", "new_text": ""}, want: "keep keep"},
		{name: "replace all", content: "x x x", args: map[string]any{"old_text": "x", "new_text": "y", "replace_all": true}, want: "y y y"},
		{name: "no match", content: "a\n", args: map[string]any{"old_text": "zzz", "new_text": "y"}, code: CodeNoMatch, want: "a\n", inMsg: "read_file"},
		{name: "indentation differs", content: "  foo()\n", args: map[string]any{"old_text": "foo()\nbar", "new_text": "y"}, code: CodeNoMatch, want: "  foo()\n", inMsg: "line 1"},
		{name: "ambiguous", content: "x\ny\nx\n", args: map[string]any{"old_text": "x", "new_text": "z"}, code: CodeAmbiguous, want: "x\ny\nx\n", inMsg: "lines 1, 3"},
		{name: "empty old_text", content: "a", args: map[string]any{"old_text": "", "new_text": "z"}, code: CodeInvalidArgs, want: "a"},
		{name: "binary", content: "\x00\x01", args: map[string]any{"old_text": "\x01", "new_text": "z"}, code: CodeNotText, want: "\x00\x01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newTestWS(t, map[string]string{"f.txt": tt.content})
			tt.args["path"] = "f.txt"
			msg, code := w.call("edit_file", tt.args, nil)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if !strings.Contains(msg, tt.inMsg) {
				t.Errorf("message %q does not say %q", msg, tt.inMsg)
			}
			if got := w.read("f.txt"); got != tt.want {
				t.Errorf("file %q, want %q", got, tt.want)
			}
		})
	}
	w := newTestWS(t, nil)
	if _, code := w.call("edit_file", map[string]any{"path": "missing", "old_text": "a", "new_text": "b"}, nil); code != CodeNotFound {
		t.Errorf("missing file: %q", code)
	}
}

func TestListDir(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{
		"b.txt": "", "a/x.go": "", "a/deep/y.go": "", "a/deep/deeper/z.go": "", ".agent/todos.json": "[]", ".hidden": "",
	})
	if err := os.Symlink("b.txt", filepath.Join(w.dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    map[string]any
		code    string
		entries string
		total   int
		next    int
	}{
		{name: "default depth 2", args: map[string]any{}, entries: ".hidden\na/\n  deep/\n  x.go\nb.txt\nlink@", total: 6},
		{name: "depth 1", args: map[string]any{"depth": 1}, entries: ".hidden\na/\nb.txt\nlink@", total: 4},
		{name: "deeper", args: map[string]any{"dir_path": "a", "depth": 3}, entries: "deep/\n  deeper/\n    z.go\n  y.go\nx.go", total: 5},
		{name: "paged", args: map[string]any{"offset": 2, "limit": 2}, entries: "a/\n  deep/", total: 6, next: 4},
		{name: "offset past end", args: map[string]any{"offset": 40}, code: CodeInvalidArgs},
		{name: "a file", args: map[string]any{"dir_path": "b.txt"}, code: CodeNotFound},
		{name: "missing", args: map[string]any{"dir_path": "nope"}, code: CodeNotFound},
		{name: "outside", args: map[string]any{"dir_path": ".."}, code: CodePathOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r ListResult
			msg, code := w.call("list_dir", tt.args, &r)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if code != "" {
				return
			}
			if r.Entries != tt.entries || r.Total != tt.total || r.NextOffset != tt.next {
				t.Errorf("got %q total %d next %d, want %q total %d next %d", r.Entries, r.Total, r.NextOffset, tt.entries, tt.total, tt.next)
			}
		})
	}
}

// Smallest real files of each kind, enough for MIME sniffing.
var (
	pngBytes = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	pdfBytes = "%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"
)

func TestReadImageAndPDF(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{"i.png": pngBytes, "d.pdf": pdfBytes, "t.txt": "text", "g.gif": "GIF89a\x01\x00"})
	big := filepath.Join(w.dir, "big.png")
	if err := os.WriteFile(big, []byte(pngBytes), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxImageBytes+1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, path, code, mime, data string
	}{
		{"png", "read_image_file", "i.png", "", "image/png", pngBytes},
		{"gif", "read_image_file", "g.gif", "", "image/gif", "GIF89a\x01\x00"},
		{"pdf", "read_pdf_file", "d.pdf", "", "application/pdf", pdfBytes},
		{"text as image", "read_image_file", "t.txt", CodeInvalidArgs, "", ""},
		{"pdf as image", "read_image_file", "d.pdf", CodeInvalidArgs, "", ""},
		{"image as pdf", "read_pdf_file", "i.png", CodeInvalidArgs, "", ""},
		{"too large", "read_image_file", "big.png", CodeTooLarge, "", ""},
		{"missing", "read_pdf_file", "nope.pdf", CodeNotFound, "", ""},
		{"outside", "read_image_file", "/etc/hostname", CodePathOutside, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r map[string]string
			msg, code := w.call(tt.tool, map[string]any{"path": tt.path}, &r)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if code != "" {
				return
			}
			// Exactly these two keys: the MCP front end turns them into
			// image or resource content.
			if len(r) != 2 || r["mime_type"] != tt.mime {
				t.Fatalf("result %v, want exactly mime_type=%s and data", r, tt.mime)
			}
			if got, err := base64.StdEncoding.DecodeString(r["data"]); err != nil || string(got) != tt.data {
				t.Errorf("data decodes to %q (%v)", got, err)
			}
			if !strings.Contains(msg, tt.path) || !strings.Contains(msg, "bytes") {
				t.Errorf("message %q should give the path and size", msg)
			}
		})
	}
}
