package exec

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// metadataCases are shared by the table test, the comparison with the PEP's
// reference implementation and the fuzz seed corpus.
var metadataCases = []struct {
	name string
	src  string
	want *Metadata
	err  string // substring of the error; "" means no error
}{
	{name: "no block", src: "print('hi')\n"},
	{name: "empty file", src: ""},
	{
		name: "simple",
		src:  "# /// script\n# requires-python = \">=3.11\"\n# dependencies = [\"requests<3\", \"rich\"]\n# ///\nprint(1)\n",
		want: &Metadata{RequiresPython: ">=3.11", Dependencies: []string{"requests<3", "rich"}},
	},
	{
		name: "after shebang",
		src:  "#!/usr/bin/env -S uv run --script\n# /// script\n# dependencies = []\n# ///\n",
		want: &Metadata{Dependencies: []string{}},
	},
	{
		name: "after docstring",
		src:  "\"\"\"Do things.\"\"\"\nimport sys\n\n# /// script\n# requires-python = '>=3.8'\n# ///\n",
		want: &Metadata{RequiresPython: ">=3.8"},
	},
	{
		name: "multi-line dependencies with comments and trailing comma",
		src: "# /// script\n# dependencies = [\n#   \"httpx\",  # the client\n#\n#   'rich>=13',\n# ]\n" +
			"# requires-python = \">=3.10\"\n# ///\n",
		want: &Metadata{RequiresPython: ">=3.10", Dependencies: []string{"httpx", "rich>=13"}},
	},
	{
		name: "tool table is skipped",
		src: "# /// script\n# dependencies = [\"a\"]\n# [tool.uv]\n# exclude-newer = \"2024-01-01T00:00:00Z\"\n" +
			"# index = [{name = \"x\", url = \"https://x\"}]\n# dependencies = 3\n# ///\n",
		want: &Metadata{Dependencies: []string{"a"}},
	},
	{
		name: "bare values and dates are skipped",
		src:  "# /// script\n# a = 1\n# b = true\n# c = 1979-05-27 07:32:00Z\n# d = -0.5e3\n# e = { x = [1, 2] }\n# ///\n",
		want: &Metadata{},
	},
	{
		name: "escapes",
		src:  "# /// script\n# requires-python = \"\\u003e=3.9\\t\"\n# ///\n",
		want: &Metadata{RequiresPython: ">=3.9\t"},
	},
	{
		name: "multi-line strings",
		src:  "# /// script\n# requires-python = \"\"\"\n# >=3.9\"\"\"\n# x = '''a\n# b'''\n# ///\n",
		want: &Metadata{RequiresPython: ">=3.9"},
	},
	{
		// The PEP's regex is greedy: the inner "# ///" becomes TOML content
		// ("///"), which is invalid, as in the reference implementation.
		name: "greedy: the last closing line of a comment run ends the block",
		src:  "# /// script\n# dependencies = [\"a\"]\n# ///\n# requires-python = \">=3.12\"\n# ///\n",
		err:  "line 3: toml: invalid character at start of key",
	},
	{name: "unclosed block is ignored", src: "# /// script\n# dependencies = [\"a\"]\nprint(1)\n"},
	{name: "block must start the line", src: " # /// script\n# dependencies = [\"a\"]\n# ///\n"},
	{name: "other block types are ignored", src: "# /// pyproject\n# dependencies = 3\n# ///\n"},
	{name: "closing line needs the newline before it", src: "# /// script\n# ///\n"},
	{
		name: "empty comment lines",
		src:  "# /// script\n#\n# dependencies = [\"a\"]\n#\n# ///",
		want: &Metadata{Dependencies: []string{"a"}},
	},
	{
		name: "two script blocks",
		src:  "# /// script\n# a = 1\n# ///\n\n# /// script\n# b = 1\n# ///\n",
		err:  "more than one",
	},
	{name: "dependencies not an array", src: "# /// script\n# dependencies = \"requests\"\n# ///\n", err: "dependencies must be an array of strings"},
	{name: "dependencies with a number", src: "# /// script\n# dependencies = [\"a\", 1]\n# ///\n", err: "array of strings"},
	{name: "requires-python not a string", src: "# /// script\n# requires-python = 3.11\n# ///\n", err: "requires-python must be a string"},
	{name: "unclosed array", src: "# /// script\n# dependencies = [\"a\"\n# ///\n", err: "expected character ]"},
	{name: "unclosed string", src: "# /// script\n# requires-python = \">=3\n# ///\n", err: "line 2"},
	{name: "duplicate key", src: "# /// script\n# dependencies = []\n# dependencies = []\n# ///\n", err: "line 3: toml: key dependencies is already defined"},
	{name: "missing value", src: "# /// script\n# dependencies =\n# ///\n", err: "line 2: toml:"},
	{name: "garbage", src: "# /// script\n# this is not toml\n# ///\n", err: "expected character ="},
	{name: "bad escape", src: "# /// script\n# requires-python = \"\\q\"\n# ///\n", err: "invalid escape"},
	{name: "two values on a line", src: "# /// script\n# a = 1 b = 2\n# ///\n", err: "expected newline"},
}

func TestParseMetadata(t *testing.T) {
	t.Parallel()
	for _, tc := range metadataCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMetadata([]byte(tc.src))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrMetadata) {
					t.Fatalf("ParseMetadata() error = %v, want ErrMetadata containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseMetadata() error = %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseMetadata() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

// referenceImpl is the PEP 723 reference implementation (python3 3.11+ has
// tomllib), serving one JSON-encoded source per line.
const referenceImpl = `
import datetime, json, re, sys, tomllib
REGEX = r'(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$'
def read(script):
    name = 'script'
    matches = list(filter(lambda m: m.group('type') == name, re.finditer(REGEX, script)))
    if len(matches) > 1:
        raise ValueError(f'Multiple {name} blocks found')
    elif len(matches) == 1:
        content = ''.join(
            line[2:] if line.startswith('# ') else line[1:]
            for line in matches[0].group('content').splitlines(keepends=True)
        )
        return tomllib.loads(content)
    return None
def plain(v):  # floats (inf, nan) and dates become objects, never strings
    if isinstance(v, (float, datetime.date, datetime.time)):
        return {"toml": repr(v)}
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v
for line in sys.stdin:
    try:
        d = read(json.loads(line))
        out = {"none": True} if d is None else {"requires_python": plain(d.get("requires-python")), "dependencies": plain(d.get("dependencies"))}
    except Exception as e:
        out = {"error": str(e) or type(e).__name__}
    sys.stdout.write(json.dumps(out, default=str) + "\n")
    sys.stdout.flush()
`

type refResult struct {
	None           bool   `json:"none"`
	RequiresPython any    `json:"requires_python"`
	Dependencies   any    `json:"dependencies"`
	Error          string `json:"error"`
}

// reference is one python3 process running referenceImpl, shared by the
// tests of this process.
var reference struct {
	once sync.Once
	mu   sync.Mutex
	in   io.WriteCloser
	out  *bufio.Reader
	err  error
}

func referenceParse(t testing.TB, src string) refResult {
	t.Helper()
	py := requirePython(t)
	reference.once.Do(func() {
		cmd := osexec.Command(py, "-c", referenceImpl)
		in, err := cmd.StdinPipe()
		if err != nil {
			reference.err = err
			return
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			reference.err = err
			return
		}
		reference.err = cmd.Start()
		reference.in, reference.out = in, bufio.NewReader(out)
	})
	if reference.err != nil {
		t.Fatalf("start the reference implementation: %v", reference.err)
	}
	reference.mu.Lock()
	defer reference.mu.Unlock()
	line, _ := json.Marshal(src)
	if _, err := reference.in.Write(append(line, '\n')); err != nil {
		t.Fatalf("reference implementation: %v", err)
	}
	b, err := reference.out.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reference implementation: %v", err)
	}
	var r refResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("reference implementation said %q: %v", b, err)
	}
	return r
}

// compareWithReference checks ParseMetadata against the reference:
//   - the same block is found (or none);
//   - where the reference reads the values, we read the same ones, or
//     refuse them for having the wrong type (tomllib has no types to check);
//   - where the reference fails, we never claim there is no block. We may
//     accept what tomllib refuses only in keys we skip (for example an
//     out-of-range date), never in requires-python or dependencies.
func compareWithReference(t testing.TB, src string) refResult {
	t.Helper()
	if !utf8.ValidString(src) {
		return refResult{None: true} // Python would not read the file at all
	}
	r := referenceParse(t, src)
	got, err := ParseMetadata([]byte(src))
	switch {
	case r.Error != "":
		if err == nil && got == nil {
			t.Fatalf("reference fails (%s), we find no block in %q", r.Error, src)
		}
	case r.None:
		if got != nil || err != nil {
			t.Fatalf("reference finds no block, we got %#v, %v in %q", got, err, src)
		}
	case err != nil:
		if !strings.Contains(err.Error(), "must be") {
			t.Fatalf("reference reads the block (%+v), we fail: %v in %q", r, err, src)
		}
		_, rpString := r.RequiresPython.(string)
		if rpString || r.RequiresPython == nil {
			if deps, ok := r.Dependencies.([]any); r.Dependencies == nil || ok && allStrings(deps) {
				t.Fatalf("reference reads well-typed values (%+v), we fail: %v in %q", r, err, src)
			}
		}
	default:
		if got == nil {
			t.Fatalf("reference finds a block, we do not in %q", src)
		}
		rp, _ := r.RequiresPython.(string)
		if r.RequiresPython != nil && rp != got.RequiresPython || r.RequiresPython == nil && got.RequiresPython != "" {
			t.Fatalf("requires-python %q, reference %#v in %q", got.RequiresPython, r.RequiresPython, src)
		}
		var want []string
		if deps, ok := r.Dependencies.([]any); ok {
			want = []string{}
			for _, d := range deps {
				s, _ := d.(string)
				want = append(want, s)
			}
		}
		if !reflect.DeepEqual(want, got.Dependencies) {
			t.Fatalf("dependencies %#v, reference %#v in %q", got.Dependencies, r.Dependencies, src)
		}
	}
	return r
}

func allStrings(v []any) bool {
	for _, e := range v {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

func TestParseMetadataMatchesReference(t *testing.T) {
	t.Parallel()
	for _, tc := range metadataCases {
		t.Run(tc.name, func(t *testing.T) { compareWithReference(t, tc.src) })
	}
}

// FuzzParseMetadataReference compares ParseMetadata with the PEP's
// reference implementation on generated sources.
func FuzzParseMetadataReference(f *testing.F) {
	for _, tc := range metadataCases {
		f.Add(tc.src)
	}
	f.Add("# /// script\n# dependencies = [\"a\", 'b']\n# [tool.x]\n# y = 1979-05-27\n# ///\n")
	f.Fuzz(func(t *testing.T, src string) { compareWithReference(t, src) })
}

func FuzzParseMetadata(f *testing.F) {
	for _, tc := range metadataCases {
		f.Add([]byte(tc.src))
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "skill", "scripts", "deps.py")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("# /// script\r\n# dependencies = [\"a\"]\r\n# ///\r\n"))
	f.Add([]byte("# /// script\n# a = [[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]\n# ///\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		md, err := ParseMetadata(src)
		if err != nil {
			if md != nil || !errors.Is(err, ErrMetadata) {
				t.Fatalf("error %v with metadata %#v", err, md)
			}
			return
		}
		md2, err2 := ParseMetadata(src)
		if err2 != nil || !reflect.DeepEqual(md, md2) {
			t.Fatalf("not deterministic: %#v %v vs %#v %v", md, err, md2, err2)
		}
		if md != nil {
			if _, err := json.Marshal(md); err != nil {
				t.Fatalf("metadata does not encode: %v", err)
			}
		}
	})
}

// realPython is python3's own executable rather than whatever PATH holds
// (a pyenv shim is a shell script that adds variables and ~100 ms).
var realPython = sync.OnceValues(func() (string, error) {
	p, err := osexec.LookPath("python3")
	if err != nil {
		return "", err
	}
	out, err := osexec.Command(p, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

func requirePython(t testing.TB) string {
	t.Helper()
	p, err := realPython()
	if err != nil {
		t.Skipf("python3 is not usable: %v", err)
	}
	return p
}

// TestParseMetadataRandomBlocks compares with the reference on sources
// assembled from fragments that real blocks (and broken ones) are made of,
// which random byte mutation rarely reaches.
func TestParseMetadataRandomBlocks(t *testing.T) {
	t.Parallel()
	requirePython(t)
	inner := []string{
		`# dependencies = ["a", "b"]`, `# requires-python = ">=3.8"`, `# dependencies = [`, `#   "x",`, `#   'y' # c`, `# ]`,
		`# [tool.uv]`, `# [[tool.x]]`, `# a = 1`, `# a = 1979-05-27T07:32:00Z`, `# t = 07:32:00.5`, `#`, `#x`, `# b = 'lit'`,
		`# c = """m`, `# l"""`, `# e = '''`, `# m'''`, `# d = { e = 1, f = [1, {g = "h"}] }`, `# x = 0x1F`, `# y = 1_000`,
		`# z = 1__0`, `# w = +inf`, `# v = -0.5e-3`, `# requires-python = 3`, `# "dependencies" = []`, `# dependencies.x = 1`,
		`# [dependencies]`, `# q = "\u00e9"`, `# q = "\x41"`, `#  k = "v"  # comment`, `# = 1`, `# k = "a" "b"`,
		`# k = [1,]`, `# k = [,]`, `# k = true`, `# k = tru`, `# k = 01`, `# k = 1.`, `# 'quoted key' = 1`, `# a.b.c = 1`,
		`# requires-python = ''`, `# dependencies = [[]]`, `# dependencies = []`, `# k = "unterminated`, `# k = "tab	in"`,
	}
	outer := []string{"# /// script", "# /// script", "# /// other", "# ///", "print(1)", `"""doc"""`, "#!/usr/bin/env python3", "", "# comment", " # /// script"}
	rng := rand.New(rand.NewPCG(723, 1))
	stats := map[string]int{}
	for i := 0; i < 3000; i++ {
		var lines []string
		pick := func(from []string, n int) {
			for ; n > 0; n-- {
				lines = append(lines, from[rng.IntN(len(from))])
			}
		}
		if rng.IntN(4) == 0 { // anything goes
			for n := 1 + rng.IntN(12); n > 0; n-- {
				if rng.IntN(3) == 0 {
					pick(outer, 1)
				} else {
					pick(inner, 1)
				}
			}
		} else { // a block, possibly broken, between other lines
			pick(outer, rng.IntN(3))
			lines = append(lines, "# /// script")
			pick(inner, rng.IntN(6))
			lines = append(lines, "# ///")
			pick(outer, rng.IntN(3))
		}
		sep := "\n"
		if rng.IntN(10) == 0 {
			sep = "\r\n"
		}
		src := strings.Join(lines, sep)
		if rng.IntN(2) == 0 {
			src += sep
		}
		switch r := compareWithReference(t, src); {
		case r.Error != "":
			stats["reference error"]++
		case r.None:
			stats["no block"]++
		default:
			stats["block read"]++
		}
	}
	t.Logf("%v", stats)
}
