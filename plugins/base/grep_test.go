package base

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestGrepFiles(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{
		".gitignore":          "build/\n*.log\n!keep.log\n",
		"main.go":             "package main\n\nfunc main() { run() }\n",
		"run.go":              "package main\n\nfunc run() {}\n",
		"web/app.ts":          "export function run() {}\n",
		"web/app.tsx":         "export const App = () => run();\n",
		"web/.gitignore":      "generated.ts\n",
		"web/generated.ts":    "function run() {}\n",
		"web/trace.log":       "run()\n",
		"build/out.go":        "func run() {}\n",
		"debug.log":           "run() failed\n",
		"keep.log":            "run() kept\n",
		"bin.dat":             "\x00run()",
		"notes/TODO":          "Run it\nrun later\n",
		".agent/todos.json":   "run()",
		".git/config":         "run()",
		"multi.txt":           "alpha\nbeta\n",
		"deep/a/b/c/deep.txt": "needle here\n",
	})
	// Modification times decide the order: run.go newest, main.go oldest.
	base := time.Now().Add(-time.Hour)
	for i, f := range []string{"main.go", "web/app.ts", "web/app.tsx", "keep.log", "notes/TODO", "run.go"} {
		ts := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(filepath.Join(w.dir, f), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("run.go", filepath.Join(w.dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  map[string]any
		code  string
		files []string
		trunc bool
	}{
		{name: "literal, newest first, ignores honoured", args: map[string]any{"pattern": "run()"},
			files: []string{"run.go", "notes/TODO", "keep.log", "web/app.tsx", "web/app.ts", "main.go"}},
		{name: "literal prefix", args: map[string]any{"pattern": `fun\w+ run\(`}, files: []string{"run.go", "web/app.ts"}},
		{name: "no literal", args: map[string]any{"pattern": `^\s*export (const|function)`}, files: []string{"web/app.tsx", "web/app.ts"}},
		{name: "case-insensitive", args: map[string]any{"pattern": `(?i)^run it`}, files: []string{"notes/TODO"}},
		{name: "anchors are per line", args: map[string]any{"pattern": `^beta$`}, files: []string{"multi.txt"}},
		{name: "no match across lines", args: map[string]any{"pattern": `alpha\sbeta`}, files: []string{}},
		{name: "include", args: map[string]any{"pattern": "run", "include": "*.go"}, files: []string{"run.go", "main.go"}},
		{name: "include braces", args: map[string]any{"pattern": "run", "include": "*.{ts,tsx}"}, files: []string{"web/app.tsx", "web/app.ts"}},
		{name: "include path glob", args: map[string]any{"pattern": "needle", "include": "deep/**/*.txt"}, files: []string{"deep/a/b/c/deep.txt"}},
		{name: "path", args: map[string]any{"pattern": "run", "path": "web"}, files: []string{"web/app.tsx", "web/app.ts"}},
		{name: "path is a file", args: map[string]any{"pattern": "run", "path": "main.go"}, files: []string{"main.go"}},
		{name: "limit", args: map[string]any{"pattern": "run()", "limit": 2}, files: []string{"run.go", "notes/TODO"}, trunc: true},
		{name: "no match", args: map[string]any{"pattern": "zzz_nothing"}, files: []string{}},
		{name: "bad regexp", args: map[string]any{"pattern": "func("}, code: CodeInvalidArgs},
		{name: "empty pattern", args: map[string]any{"pattern": ""}, code: CodeInvalidArgs},
		{name: "include with too many brace groups", args: map[string]any{"pattern": "run", "include": strings.Repeat("{a,b}", 40)}, code: CodeInvalidArgs},
		{name: "outside", args: map[string]any{"pattern": "x", "path": "../"}, code: CodePathOutside},
		{name: "missing path", args: map[string]any{"pattern": "x", "path": "nope"}, code: CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r GrepResult
			msg, code := w.call("grep_files", tt.args, &r)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if code != "" {
				return
			}
			if !reflect.DeepEqual(r.Files, tt.files) || r.Truncated != tt.trunc {
				t.Errorf("files %q truncated %v, want %q %v (%s)", r.Files, r.Truncated, tt.files, tt.trunc, msg)
			}
		})
	}
}

func TestLineMatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, text string
		want          bool
	}{
		{"abc", "xxabcxx", true},
		{"abc", "ab\nc", false},
		{`abc\d`, "abc\nabc1", true},
		{`abc\d`, "abcx\nabc", false},
		{`^abc`, "x abc\nabc", true},
		{`^abc`, "x abc", false},
		{`c$`, "abc\nd", true},
		{`a\sb`, "a\nb", false},
		{`a\sb`, "a\nb\na b", true},
		{`[^x]y`, "\ny", false},
		{`(?i)HELLO`, "say hello", true},
	}
	for _, tt := range tests {
		m, err := newLineMatcher(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.match([]byte(tt.text)); got != tt.want {
			t.Errorf("%q on %q = %v, want %v", tt.pattern, tt.text, got, tt.want)
		}
	}
}
