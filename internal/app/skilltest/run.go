package skilltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/agentskills/agent/internal/app/workspace"
)

// Caller is the workspace's one call path; *workspace.Workspace is one.
type Caller interface {
	Call(ctx context.Context, name string, args json.RawMessage, o workspace.CallOptions) workspace.Outcome
}

// Kinds of a Result.
const (
	KindCase  = "case"
	KindCheck = "check"
)

// Result is one case or check, passed or failed.
type Result struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Failures say what did not hold, one line each; none when passed.
	Failures []string `json:"failures,omitempty"`
	// Denials are the lines of the outcome in which the sandbox refused
	// the code a path or a host (see Denials).
	Denials []string `json:"denials,omitempty"`
	// Output is what the call answered (code, message, result), or a
	// check's output.
	Output string `json:"output,omitempty"`
	// Skipped says why a check did not run; a skipped check passes.
	Skipped  string        `json:"skipped,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Passed reports whether nothing failed.
func (r Result) Passed() bool { return len(r.Failures) == 0 }

// Report is the whole run of one skill.
type Report struct {
	Skill   string   `json:"skill"`
	Results []Result `json:"results"`
}

// Failed counts the failed results.
// Skipped counts the results that did not run.
func (r Report) Skipped() int {
	n := 0
	for _, x := range r.Results {
		if x.Skipped != "" {
			n++
		}
	}
	return n
}

func (r Report) Failed() int {
	n := 0
	for _, x := range r.Results {
		if !x.Passed() {
			n++
		}
	}
	return n
}

// Options of a run of cases.
type Options struct {
	// Skill is the canonical name of the skill under test: script cases
	// call script_run for it.
	Skill string
	// Workspace is the scratch workspace the calls write into
	// (AGENT_WORKSPACE of the workspace the Caller was loaded with); it
	// is emptied before each case.
	Workspace string
	// Run, when set, picks the cases whose name it matches.
	Run *regexp.Regexp
	// Timeout bounds one call; 0 keeps the call path's deadline policy.
	Timeout time.Duration
}

// WorkspaceVar in a script's or a tool's string arguments is replaced by
// the scratch workspace's path, so that a case can name where to write.
const WorkspaceVar = "${WORKSPACE}"

// RunCases calls each case through c, in order, and checks it.
func RunCases(ctx context.Context, c Caller, cases []Case, o Options) []Result {
	var out []Result
	for _, tc := range cases {
		if o.Run != nil && !o.Run.MatchString(tc.Name) {
			continue
		}
		out = append(out, runCase(ctx, c, tc, o))
	}
	return out
}

func runCase(ctx context.Context, c Caller, tc Case, o Options) Result {
	r := Result{Name: tc.Name, Kind: KindCase, File: tc.File, Line: tc.Line}
	if err := EmptyDir(o.Workspace); err != nil {
		r.Failures = append(r.Failures, fmt.Sprintf("empty the scratch workspace: %v", err))
		return r
	}
	name, args, err := callOf(tc, o)
	if err != nil {
		r.Failures = append(r.Failures, err.Error())
		return r
	}
	start := time.Now()
	out := c.Call(ctx, name, args, workspace.CallOptions{Timeout: o.Timeout, CallID: "test:" + tc.Name})
	r.Duration = time.Since(start)
	r.Output = describe(out)
	r.Denials = Denials(out.Message)
	if out.Err != nil && len(r.Denials) == 0 {
		r.Denials = Denials(out.Err.Error())
	}
	r.Failures = check(tc.Expect, out, o.Workspace)
	switch {
	case len(r.Denials) > 0 && !tc.Expect.Denied:
		r.Failures = append(r.Failures, fmt.Sprintf("the sandbox refused what SKILL.md does not declare: %s", strings.Join(r.Denials, "; ")))
	case len(r.Denials) == 0 && tc.Expect.Denied:
		r.Failures = append(r.Failures, "expected the sandbox to refuse the call (denied: true), and it saw no denial")
	}
	return r
}

// callOf is the call a case makes, with ${WORKSPACE} replaced.
func callOf(tc Case, o Options) (string, json.RawMessage, error) {
	if tc.Tool != "" {
		return tc.Tool, expandWorkspace(tc.Args, o.Workspace), nil
	}
	var argv []string
	if err := json.Unmarshal(tc.Args, &argv); err != nil {
		return "", nil, fmt.Errorf("script args: %w", err)
	}
	args, err := json.Marshal(map[string]any{"skill_name": o.Skill, "script_name": tc.Script, "args": argv})
	if err != nil {
		return "", nil, err
	}
	return "script_run", expandWorkspace(args, o.Workspace), nil
}

// expandWorkspace replaces ${WORKSPACE} inside the JSON's strings: the
// path is JSON-escaped, so that it cannot break the document.
func expandWorkspace(args json.RawMessage, dir string) json.RawMessage {
	if dir == "" || !bytes.Contains(args, []byte(WorkspaceVar)) {
		return args
	}
	q, _ := json.Marshal(dir)
	return bytes.ReplaceAll(args, []byte(WorkspaceVar), q[1:len(q)-1])
}

func describe(out workspace.Outcome) string {
	if out.OK() {
		return fmt.Sprintf("success: %s (%s)", out.Value, out.Message)
	}
	msg := out.Message
	if msg == "" && out.Err != nil {
		msg = out.Err.Error()
	}
	return fmt.Sprintf("error %s: %s", out.Code, msg)
}

// check lists what of e did not hold for out.
func check(e Expect, out workspace.Outcome, ws string) []string {
	var fails []string
	if out.OK() != e.Success {
		if e.Success {
			fails = append(fails, fmt.Sprintf("expected success, got error %s: %s", out.Code, out.Message))
		} else {
			fails = append(fails, fmt.Sprintf("expected a failure, got success: %s", out.Value))
		}
	}
	if e.Error != "" && out.Code != e.Error && !out.OK() {
		fails = append(fails, fmt.Sprintf("expected error %s, got %s: %s", e.Error, out.Code, out.Message))
	}
	if e.message != nil && !e.message.MatchString(out.Message) {
		fails = append(fails, fmt.Sprintf("message %q does not match %q", out.Message, e.Message))
	}
	if len(e.JSON) > 0 {
		if !out.OK() {
			fails = append(fails, "json: the call failed, so it has no result to check")
		} else {
			for _, p := range e.JSON {
				fails = append(fails, checkPath(p, out.Value)...)
			}
		}
	}
	for _, f := range e.Files {
		fails = append(fails, checkFile(f, ws)...)
	}
	return fails
}

func checkPath(p PathCheck, value json.RawMessage) []string {
	got := gjson.GetBytes(value, p.Path)
	if p.Absent {
		if got.Exists() {
			return []string{fmt.Sprintf("json %s: expected no value, got %s", p.Path, got.Raw)}
		}
		return nil
	}
	if !got.Exists() {
		return []string{fmt.Sprintf("json %s: no such path in the result %s", p.Path, value)}
	}
	var fails []string
	if p.Equals != nil && !sameJSON(p.Equals, []byte(got.Raw)) {
		fails = append(fails, fmt.Sprintf("json %s: expected %s, got %s", p.Path, p.Equals, got.Raw))
	}
	if p.Contains != nil && !contains(got, *p.Contains) {
		fails = append(fails, fmt.Sprintf("json %s: expected it to contain %q, got %s", p.Path, *p.Contains, got.Raw))
	}
	if p.matches != nil && !p.matches.MatchString(got.String()) {
		fails = append(fails, fmt.Sprintf("json %s: %q does not match %q", p.Path, got.String(), p.Matches))
	}
	return fails
}

// contains: a substring of a string, an element of an array (compared as
// text), a key of an object.
func contains(v gjson.Result, s string) bool {
	switch {
	case v.IsArray():
		for _, el := range v.Array() {
			if el.String() == s {
				return true
			}
		}
		return false
	case v.IsObject():
		return v.Get(gjson.Escape(s)).Exists()
	}
	return strings.Contains(v.String(), s)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// maxFileCheck bounds what a file check reads.
const maxFileCheck = 4 << 20

func checkFile(f FileCheck, ws string) []string {
	if ws == "" {
		return []string{fmt.Sprintf("file %s: no scratch workspace", f.Path)}
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return []string{fmt.Sprintf("file %s: %v", f.Path, err)}
	}
	defer root.Close()
	data, err := readBounded(root, filepath.FromSlash(f.Path))
	if f.Absent {
		if err == nil {
			return []string{fmt.Sprintf("file %s: expected no such file, and the call wrote one", f.Path)}
		}
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return []string{fmt.Sprintf("file %s: the call did not write it", f.Path)}
	}
	if err != nil {
		return []string{fmt.Sprintf("file %s: %v", f.Path, err)}
	}
	var fails []string
	text := string(data)
	if f.Equals != nil && text != *f.Equals {
		fails = append(fails, fmt.Sprintf("file %s: expected %q, got %q", f.Path, *f.Equals, clip(text)))
	}
	if f.Contains != nil && !strings.Contains(text, *f.Contains) {
		fails = append(fails, fmt.Sprintf("file %s: expected it to contain %q, got %q", f.Path, *f.Contains, clip(text)))
	}
	if f.matches != nil && !f.matches.MatchString(text) {
		fails = append(fails, fmt.Sprintf("file %s: %q does not match %q", f.Path, clip(text), f.Matches))
	}
	return fails
}

// readBounded reads a file inside root (os.Root: a symbolic link the
// code planted cannot lead the check out of the workspace).
func readBounded(root *os.Root, name string) ([]byte, error) {
	fh, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	buf := make([]byte, maxFileCheck+1)
	n, err := fh.Read(buf)
	for err == nil && n < len(buf) {
		var m int
		m, err = fh.Read(buf[n:])
		n += m
	}
	if n > maxFileCheck {
		return nil, fmt.Errorf("larger than %d bytes", maxFileCheck)
	}
	return buf[:n], nil
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// EmptyDir removes what dir holds and keeps dir: the scratch workspace
// between cases and evals.
func EmptyDir(dir string) error {
	if dir == "" {
		return nil
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if err := os.RemoveAll(filepath.Join(dir, de.Name())); err != nil {
			return err
		}
	}
	return nil
}

// denialSigns are how the sandbox's refusals reach a call's outcome: the
// sandbox keeps no log of its own (Landlock answers the code EACCES, the
// seccomp filter EPERM, the network namespace leaves no route, and the
// proxy answers 403), so what the code made of the refusal, in its error
// or stderr tail, is what there is to report.
var denialSigns = regexp.MustCompile(`(?i)permission denied|operation not permitted|\bEACCES\b|\bEPERM\b|read-only file system|agent sandbox proxy:|network is unreachable|temporary failure in name resolution|name or service not known`)

// Denials returns the lines of msg that carry a sign of the sandbox's
// refusal, each cut to 200 bytes.
func Denials(msg string) []string {
	var out []string
	for line := range strings.SplitSeq(msg, "\n") {
		// The exec plugin joins the stderr tail into one line; split
		// it again at the script's own sentences.
		for part := range strings.SplitSeq(line, "; ") {
			if denialSigns.MatchString(part) {
				out = append(out, clip(strings.TrimSpace(part)))
			}
		}
	}
	return out
}
