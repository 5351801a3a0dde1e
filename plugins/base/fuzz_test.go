package base

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzPaths sends arbitrary paths to the file tools of a workspace that
// sits next to a secret folder and holds links out of itself. Whatever the
// path, nothing outside the workspace is read, written or created.
func FuzzPaths(f *testing.F) {
	for _, p := range hostilePaths {
		f.Add(p, uint8(0))
		f.Add(p, uint8(1))
	}
	for _, p := range []string{"inside.txt", "dir/x.txt", "./dir/../inside.txt", "new/file.txt", "link_out", "dir//x.txt", "dir/./x.txt/", "~/x", "..."} {
		f.Add(p, uint8(2))
	}
	parent := f.TempDir()
	ws := filepath.Join(parent, "ws")
	outside := filepath.Join(parent, "outside")
	home := filepath.Join(ws, ".agent-home")
	for _, d := range []string{filepath.Join(ws, "dir"), outside, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for name, data := range map[string]string{
		filepath.Join(outside, "secret.txt"): secret,
		filepath.Join(home, "secret.txt"):    secret,
		filepath.Join(ws, "inside.txt"):      "inside\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{"link_out": "../outside", "link_abs": outside, "dir/up": "../..", "link_home": ".agent-home"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			f.Fatal(err)
		}
	}
	s := &service{cfg: Config{Root: ws, Home: home}.withDefaults()}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string, tool uint8) {
		var out string
		var err error
		switch tool % 6 {
		case 0:
			var r ReadResult
			r, _, err = s.readFile(ctx, ReadInput{Path: p})
			out = r.Content
		case 1:
			_, _, err = s.writeFile(ctx, WriteInput{Path: p, Content: "fuzz"})
		case 2:
			var r ListResult
			r, _, err = s.listDir(ctx, ListInput{DirPath: p, Depth: 3})
			out = r.Entries
		case 3:
			var r GrepResult
			r, _, err = s.grep(ctx, GrepInput{Pattern: "SECRET", Path: p})
			out = strings.Join(r.Files, "\n")
		case 4:
			_, _, err = s.applyPatch(ctx, PatchInput{Patch: "*** Begin Patch\n*** Add File: " + p + "\n+fuzz\n*** End Patch"})
		case 5:
			_, _, err = s.editFile(ctx, EditInput{Path: p, OldText: "TOP", NewText: "fuzz"})
		}
		// Files the fuzzer wrote hold "fuzz", so any grep hit is a secret;
		// a listing may show names the fuzzer made, never AGENT_HOME.
		leak := strings.Contains(out, secret) || strings.Contains(out, ".agent-home")
		if tool%6 == 3 && out != "" {
			leak = true
		}
		if leak || (err != nil && strings.Contains(err.Error(), secret)) {
			t.Fatalf("tool %d path %q reached the secret: %q %v", tool%6, p, out, err)
		}
		for _, dir := range []string{outside, home, parent} {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				switch e.Name() {
				case "secret.txt", "ws", "outside", ".agent-home":
					continue
				}
				t.Fatalf("tool %d path %q created %s in %s", tool%6, p, e.Name(), dir)
			}
		}
		for _, file := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(home, "secret.txt")} {
			if b, _ := os.ReadFile(file); string(b) != secret {
				t.Fatalf("tool %d path %q changed %s", tool%6, p, file)
			}
		}
	})
}

// FuzzParsePatch parses arbitrary text as a patch and applies what parses
// to a small file: no panic, and a parsed patch names a file in each
// section.
func FuzzParsePatch(f *testing.F) {
	files, _ := filepath.Glob("testdata/patches/*.txtar")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if _, rest, ok := strings.Cut(string(data), "-- patch --\n"); ok {
			patch, _, _ := strings.Cut(rest, "\n-- ")
			f.Add(patch)
		}
	}
	f.Add("*** Begin Patch\n*** Update File: a\n@@\n-a\n+b\n*** End of File\n*** End Patch")
	f.Fuzz(func(t *testing.T, text string) {
		ops, err := ParsePatch(text)
		if err != nil {
			if codeOf(err) != CodeInvalidArgs {
				t.Fatalf("a parse error must be invalid_args: %v", err)
			}
			return
		}
		for _, op := range ops {
			if op.Path == "" {
				t.Fatalf("a section without a path: %+v", op)
			}
			if op.Kind == OpUpdate {
				for _, base := range []string{"", "a\nb\nc\n", "a\r\nb", "\n\n"} {
					out, err := applyChunks(base, op.Chunks, op.Path)
					if err == nil && out != "" && !strings.HasSuffix(out, "\n") {
						t.Fatalf("applied text does not end with a newline: %q", out)
					}
				}
			}
		}
	})
}

// FuzzExpandBraces expands arbitrary include globs: the result never
// exceeds the limit, and, when the limit allows, equals the plain
// recursive expansion (each group substituted into the rest of s) for
// groups without a '{' inside.
func FuzzExpandBraces(f *testing.F) {
	for _, s := range []string{"", "*.go", "*.{ts,tsx}", "{a,b}/{c,d}", "{", "}{", "{a}{b}{c}", "{,}{,}{,}{,}{,}{,}{,}{,}{,}", "src/**/*.{go,mod,sum}", "{a{b,c}d}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := expandBraces(s, maxIncludeGlobs)
		if ok && (len(got) == 0 || len(got) > maxIncludeGlobs) {
			t.Fatalf("expandBraces(%q) = %d globs", s, len(got))
		}
		if strings.Count(s, "{") > 8 || strings.Count(s, ",") > 16 || nestedBraces(s) {
			return // the reference is exponential, and it rescans a '{' inside a group
		}
		want := expandBracesRef(s)
		if ok != (len(want) <= maxIncludeGlobs) {
			t.Fatalf("expandBraces(%q) ok=%v with %d globs", s, ok, len(want))
		}
		if ok && !slices.Equal(got, want) {
			t.Fatalf("expandBraces(%q) = %q, want %q", s, got, want)
		}
	})
}

func expandBracesRef(s string) []string {
	i := strings.IndexByte(s, '{')
	j := strings.IndexByte(s[max(i, 0):], '}')
	if i < 0 || j < 0 {
		return []string{s}
	}
	j += i
	var out []string
	for _, alt := range strings.Split(s[i+1:j], ",") {
		out = append(out, expandBracesRef(s[:i]+alt+s[j+1:])...)
	}
	return out
}

func nestedBraces(s string) bool {
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			return false
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			return false
		}
		if strings.Contains(s[i+1:i+j], "{") {
			return true
		}
		s = s[i+j+1:]
	}
}

// FuzzTodoFile starts todo from an arbitrary .agent/todos.json (the
// workspace may hold anything there): the call fails with a message or
// gives each new task an id that no other item of the list has.
func FuzzTodoFile(f *testing.F) {
	for _, s := range []string{``, `null`, `[]`, `[{"id":1,"title":"a"}]`, `[{"id":3},{"id":3}]`, `[{"id":-5}]`, `{"id":1}`, `[{"id":9223372036854775807,"title":"max"}]`} {
		f.Add(s, uint8(1), 1)
	}
	root := f.TempDir()
	s := &service{cfg: Config{Root: root}.withDefaults()}
	state := filepath.Join(root, stateDir)
	if err := os.MkdirAll(state, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data string, add uint8, done int) {
		if err := os.WriteFile(filepath.Join(state, todoFile), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		in := TodoInput{CompletedTodos: []int{done}}
		for i := range int(add % 4) {
			in.NewTodos = append(in.NewTodos, fmt.Sprint("task ", i))
		}
		before := map[int]bool{}
		var list []Todo
		if json.Unmarshal([]byte(data), &list) == nil {
			for _, td := range list {
				before[td.ID] = true
			}
		}
		r, _, err := s.todo(context.Background(), in)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		seen := map[int]bool{}
		for _, td := range r.Todos[len(r.Todos)-len(in.NewTodos):] {
			if before[td.ID] || seen[td.ID] {
				t.Fatalf("new task %q got id %d, which the list %s already has", td.Title, td.ID, data)
			}
			seen[td.ID] = true
		}
	})
}

// FuzzEditFile edits an arbitrary file with arbitrary old and new text. A
// failed edit leaves the file as it was; a done edit is the replacement on
// the LF-normalised text, and the text before the first match keeps its
// bytes (line endings included).
func FuzzEditFile(f *testing.F) {
	for _, s := range [][3]string{
		{"a\nb\nc\n", "b", "B"},
		{"a\r\nb\r\nc\r\n", "a\nb", "x\ny"},
		{"lf\ncrlf\r\nx\n", "x", "y"},
		{"one\r\ntwo\nthree\r\n", "three", "3\n3"},
		{"x x x", "x", "yy"},
		{"a\r\r\nb", "a\r", "c"},
	} {
		f.Add(s[0], s[1], s[2], false)
		f.Add(s[0], s[1], s[2], true)
	}
	root := f.TempDir()
	s := &service{cfg: Config{Root: root}.withDefaults()}
	file := filepath.Join(root, "f.txt")
	f.Fuzz(func(t *testing.T, data, old, repl string, all bool) {
		if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := s.editFile(context.Background(), EditInput{Path: "f.txt", OldText: old, NewText: repl, ReplaceAll: all})
		got, rerr := os.ReadFile(file)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if string(got) != data {
				t.Fatalf("a failed edit (%v) changed the file: %q -> %q", err, data, got)
			}
			return
		}
		n := -1
		if !all {
			n = 1
		}
		if want := strings.Replace(lf(data), lf(old), lf(repl), n); lf(string(got)) != want {
			t.Fatalf("edit %q: %q -> %q in %q gave %q, want %q (LF)", data, old, repl, lf(data), got, want)
		}
		// The bytes before the first match are kept as they were.
		i := strings.Index(lf(data), lf(old))
		raw := 0
		for l := 0; l < i; l++ {
			if strings.HasPrefix(data[raw:], "\r\n") {
				raw++
			}
			raw++
		}
		if !strings.HasPrefix(string(got), data[:raw]) {
			t.Fatalf("edit %q: %q -> %q changed the text before the match: %q", data, old, repl, got)
		}
	})
}
