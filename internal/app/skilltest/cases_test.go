package skilltest

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yaml    string
		want    int
		wantErr string
	}{
		{"tool and script", `
cases:
  - name: french
    tool: greet
    args: {name: Ada, n: 2}
    expect:
      json:
        - {path: greeting, equals: "Bonjour, Ada!"}
        - {path: n, equals: 2}
  - name: script
    script: hello
    args: [Ada, --json]
    expect: {error: not_found}
`, 2, ""},
		{"empty file", ``, 0, ""},
		{"no name", "cases:\n  - tool: x\n", 0, "needs a name"},
		{"both kinds", "cases:\n  - {name: a, tool: x, script: y}\n", 0, "exactly one of"},
		{"neither kind", "cases:\n  - {name: a}\n", 0, "exactly one of"},
		{"unknown key", "cases:\n  - {name: a, tool: x, expct: {}}\n", 0, "expct"},
		{"misspelt expectation", "cases:\n  - {name: a, tool: x, expect: {sucess: true}}\n", 0, "sucess"},
		{"tool args not a map", "cases:\n  - {name: a, tool: x, args: [1]}\n", 0, "mapping"},
		{"script args not strings", "cases:\n  - {name: a, script: x, args: [[1]]}\n", 0, "list of strings"},
		{"duplicate names", "cases:\n  - {name: a, tool: x}\n  - {name: a, tool: y}\n", 0, "also at"},
		{"bad regexp", "cases:\n  - {name: a, tool: x, expect: {message: '('}}\n", 0, "message"},
		{"empty json check", "cases:\n  - {name: a, tool: x, expect: {json: [{path: a}]}}\n", 0, "say what it must hold"},
		{"file outside", "cases:\n  - {name: a, tool: x, expect: {files: [{path: ../etc/passwd}]}}\n", 0, "not a path inside"},
		{"absolute file", "cases:\n  - {name: a, tool: x, expect: {files: [{path: /etc/passwd}]}}\n", 0, "not a path inside"},
		{"success with error", "cases:\n  - {name: a, tool: x, expect: {success: true, error: e}}\n", 0, "success: true with an error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := Parse([]byte(tc.yaml), "tests/x.yaml")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrCases) {
					t.Fatalf("Parse = %v, want ErrCases with %q", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "tests/x.yaml") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) != tc.want {
				t.Fatalf("got %d cases, want %d", len(cs), tc.want)
			}
		})
	}
}

func TestParseShapes(t *testing.T) {
	cs, err := Parse([]byte("cases:\n  - name: s\n    script: hello\n    args: [Ada, '--json']\n  - name: t\n    tool: greet\n    expect: {success: false}\n"), "tests/a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := string(cs[0].Args); got != `["Ada","--json"]` {
		t.Errorf("script args = %s", got)
	}
	if got := string(cs[1].Args); got != `{}` {
		t.Errorf("tool args = %s, want {}", got)
	}
	if !cs[0].Expect.Success || cs[1].Expect.Success {
		t.Errorf("success defaults: %v %v", cs[0].Expect.Success, cs[1].Expect.Success)
	}
	if cs[1].Line != 5 {
		t.Errorf("line of the second case = %d, want 5", cs[1].Line)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("cases:\n  - {name: a, tool: x, args: {a: 1}, expect: {json: [{path: a, equals: 1}], files: [{path: o.txt, contains: x}]}}\n"))
	f.Add([]byte("cases:\n  - {name: a, script: s, args: [x], expect: {error: not_found, message: '^n'}}\n"))
	f.Add([]byte("cases: [{name: &a x, tool: *a}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := Parse(data, "tests/f.yaml")
		if err != nil {
			if !errors.Is(err, ErrCases) {
				t.Fatalf("error %v is not ErrCases", err)
			}
			return
		}
		names := map[string]bool{}
		for _, c := range cs {
			if c.Name == "" || (c.Tool == "") == (c.Script == "") || names[c.Name] {
				t.Fatalf("accepted an invalid case %+v", c)
			}
			names[c.Name] = true
			for _, fc := range c.Expect.Files {
				if strings.HasPrefix(fc.Path, "/") || strings.Contains(fc.Path, "..") && !strings.Contains(fc.Path, "...") {
					if fc.Path == ".." || strings.HasPrefix(fc.Path, "../") || strings.HasPrefix(fc.Path, "/") {
						t.Fatalf("accepted a file path outside the workspace: %q", fc.Path)
					}
				}
			}
		}
	})
}
