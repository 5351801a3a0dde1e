package skilltest

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/app/workspace"
)

// answers is a Caller that answers from a table, for the expectation
// logic; the real call path is exercised by the testscripts of
// `agent skill test` (testdata/script/skill_test_*.txtar).
type answers struct {
	ws    string
	calls []string
	out   func(name string, args json.RawMessage) workspace.Outcome
}

func (a *answers) Call(_ context.Context, name string, args json.RawMessage, _ workspace.CallOptions) workspace.Outcome {
	a.calls = append(a.calls, name+" "+string(args))
	return a.out(name, args)
}

func TestRunCases(t *testing.T) {
	ws := t.TempDir()
	cases, err := Parse([]byte(`
cases:
  - name: right
    tool: greet
    args: {name: Ada}
    expect:
      json:
        - {path: greeting, equals: "Hello, Ada!"}
        - {path: greeting, contains: Ada}
        - {path: tags, contains: b}
        - {path: greeting, matches: '^Hello'}
        - {path: missing, absent: true}
  - name: wrong
    tool: greet
    args: {name: Ada}
    expect:
      json: [{path: greeting, equals: "Bonjour, Ada!"}]
  - name: writes
    script: write
    args: ["${WORKSPACE}/out.txt"]
    expect:
      files: [{path: out.txt, equals: "hi\n"}, {path: other.txt, absent: true}]
  - name: denied
    script: steal
    expect: {success: false}
  - name: meant to be denied
    script: steal
    expect: {error: execution_failed, denied: true}
`), "tests/t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := &answers{ws: ws, out: func(name string, args json.RawMessage) workspace.Outcome {
		if name == "greet" {
			return workspace.Outcome{Value: json.RawMessage(`{"greeting":"Hello, Ada!","tags":["a","b"]}`)}
		}
		var in struct {
			Script string   `json:"script_name"`
			Args   []string `json:"args"`
		}
		_ = json.Unmarshal(args, &in)
		if in.Script == "write" {
			if err := os.WriteFile(in.Args[0], []byte("hi\n"), 0o644); err != nil {
				t.Error(err)
			}
			return workspace.Outcome{Value: json.RawMessage(`null`)}
		}
		return workspace.Outcome{Code: "execution_failed", Message: "steal.py exited with code 1; stderr (last 500 bytes): PermissionError: [Errno 13] Permission denied: '/root/.ssh/id_rsa'"}
	}}
	rs := RunCases(context.Background(), a, cases, Options{Skill: "s", Workspace: ws})
	got := map[string]Result{}
	for _, r := range rs {
		got[r.Name] = r
	}
	for name, wantPass := range map[string]bool{"right": true, "wrong": false, "writes": true, "denied": false, "meant to be denied": true} {
		if r := got[name]; r.Passed() != wantPass {
			t.Errorf("%s: passed=%v, want %v; failures %q", name, r.Passed(), wantPass, r.Failures)
		}
	}
	if d := got["denied"].Denials; len(d) != 1 || !strings.Contains(d[0], "Permission denied: '/root/.ssh/id_rsa'") {
		t.Errorf("denials of the denied case = %q", d)
	}
	if !strings.Contains(a.calls[2], `"skill_name":"s"`) || !strings.Contains(a.calls[2], filepath.Join(ws, "out.txt")) {
		t.Errorf("the script case called %s", a.calls[2])
	}
}

func TestRunPicksCases(t *testing.T) {
	cases, _ := Parse([]byte("cases:\n  - {name: alpha, tool: x}\n  - {name: beta, tool: x}\n"), "tests/t.yaml")
	a := &answers{out: func(string, json.RawMessage) workspace.Outcome { return workspace.Outcome{Value: json.RawMessage("1")} }}
	rs := RunCases(context.Background(), a, cases, Options{Run: regexpMust("^b")})
	if len(rs) != 1 || rs[0].Name != "beta" {
		t.Fatalf("ran %+v", rs)
	}
}

// TestJUnitParses reads the JUnit output back with encoding/xml into the
// shape CI tools read, rather than matching strings.
func TestJUnitParses(t *testing.T) {
	r := Report{Skill: "demo", Results: []Result{
		{Name: "ok case", Kind: KindCase, File: "tests/a.yaml", Line: 3, Duration: 1500 * time.Millisecond},
		{Name: "bad <case> & \x01", Kind: KindCase, Failures: []string{"json greeting: expected 1, got 2", "second"}, Denials: []string{"Permission denied: '/x'"}},
		{Name: "validate --strict", Kind: KindCheck},
	}}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				SystemOut string `xml:"system-out"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("JUnit output does not parse: %v\n%s", err, buf.String())
	}
	if doc.Tests != 3 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Name != "demo" {
		t.Fatalf("suites = %+v", doc)
	}
	cs := doc.Suites[0].Cases
	if cs[0].Failure != nil || cs[0].Time != "1.500" || cs[0].Classname != "demo.case" {
		t.Errorf("first case = %+v", cs[0])
	}
	if cs[1].Failure == nil || cs[1].Failure.Message != "json greeting: expected 1, got 2" || !strings.Contains(cs[1].Failure.Text, "second") {
		t.Errorf("failed case = %+v", cs[1])
	}
	if cs[1].Name != "bad <case> & \uFFFD" || !strings.Contains(cs[1].SystemOut, "Permission denied: '/x'") {
		t.Errorf("failed case name %q, out %q", cs[1].Name, cs[1].SystemOut)
	}
	if cs[2].Classname != "demo.check" {
		t.Errorf("check classname = %q", cs[2].Classname)
	}
}

func TestDenials(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want int
	}{
		{"w.py exited with code 1; stderr (last 500 bytes): PermissionError: [Errno 13] Permission denied: '/etc/x'", 1},
		{"curl: (56) Received HTTP code 403 from proxy after CONNECT; agent sandbox proxy: example.com:443 is not in the skill's permissions.network", 1},
		{"OSError: [Errno 101] Network is unreachable", 1},
		{"greet finished in 3ms", 0},
	} {
		if got := Denials(tc.msg); len(got) != tc.want {
			t.Errorf("Denials(%q) = %q, want %d", tc.msg, got, tc.want)
		}
	}
}

func regexpMust(s string) *regexp.Regexp { return regexp.MustCompile(s) }
