package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/ground/envfilter"
	"github.com/agentskills/agent/internal/isolation/procgroup"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/sdk"
)

// Error codes of the script tools (SPEC §9).
const (
	CodeNotFound         = "not_found"
	CodeInvalidName      = "invalid_name"
	CodeArgsTooLarge     = "args_too_large"
	CodeTimeout          = sdk.CodeTimeout
	CodeParseError       = "parse_error"
	CodeExecutionFailed  = "execution_failed"
	CodePermissionDenied = "permission_denied"
	CodeUVNotFound       = "uv_not_found"
)

// Limits of SPEC §9.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 1 << 20
	MaxArgs          = 100
	MaxArgBytes      = 4 << 10
	stderrTail       = 500
	parsePreview     = 200
)

// InstallUV says how to get uv. `agent check` says it once; script_run
// results only point there, since they go into a model's context.
const InstallUV = "install uv with `curl -LsSf https://astral.sh/uv/install.sh | sh` or `pipx install uv`, or set AGENT_UV to its path"

// seeCheck is what script_run says instead of InstallUV.
const seeCheck = "'agent check' says how to install uv"

// FindUV returns the uv scripts would run with: AGENT_UV (configured) when
// it is executable, else uv on PATH. why says what is missing when none is.
func FindUV(configured string) (path, why string) {
	r := runner{lookPath: osexec.LookPath, uv: configured}
	in, err := r.interpreter(nil)
	if err == nil && in.uv {
		return in.argv0, ""
	}
	return "", r.missingUV()
}

// missingUV says why no uv was found.
func (r *runner) missingUV() string {
	why := ""
	if r.uv != "" {
		why = fmt.Sprintf("AGENT_UV=%s is not an executable file, and ", r.uv)
	}
	return why + "uv was not found on PATH"
}

// baseEnv are the variables every script gets from the plugin's own
// environment; everything else must be allowed by permissions.env.
var baseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// runner starts scripts. Its fields are the seams tests replace.
type runner struct {
	lookPath  func(string) (string, error)
	timeout   time.Duration
	maxOutput int64
	uv        string // configured uv (AGENT_UV); "" means only PATH
	// waitDelay bounds how long a finished script's escaped descendants
	// (for example a daemon in its own session) may hold stdout open.
	waitDelay time.Duration
}

// interpreter is how a script will be started.
type interpreter struct {
	argv0 string
	read  []string // the real interpreter's folders, for the sandbox
	uv    bool
	venv  bool   // argv0 is the python of an environment uv prepared
	note  string // said in the result message (python3 fallback)
	info  pyInfo // what the real interpreter said about itself
}

// interpreter picks uv (AGENT_UV, then PATH) or, for a script without
// dependencies, python3.
func (r *runner) interpreter(deps []string) (interpreter, error) {
	if r.uv != "" {
		if p, err := r.lookPath(r.uv); err == nil {
			return interpreter{argv0: p, uv: true}, nil
		}
	}
	if p, err := r.lookPath("uv"); err == nil {
		return interpreter{argv0: p, uv: true}, nil
	}
	why := r.missingUV()
	if len(deps) > 0 {
		return interpreter{}, errorf(CodeUVNotFound, "%s; this script declares dependencies (%s), which need uv; %s",
			why, strings.Join(deps, ", "), seeCheck)
	}
	p, err := r.lookPath("python3")
	if err != nil {
		return interpreter{}, errorf(CodeUVNotFound, "%s, and neither was python3; %s", why, seeCheck)
	}
	return interpreter{argv0: p, note: "ran with python3 because uv was not found"}, nil
}

// argv is the command line: `uv run --script <abs> args... [--json]`, or
// `python3 <abs> args... [--json]` without uv.
func (in interpreter) argv(script string, args []string, json bool) []string {
	out := make([]string, 0, len(args)+5)
	out = append(out, in.argv0)
	if in.uv {
		out = append(out, "run", "--script")
	}
	out = append(out, script)
	out = append(out, args...)
	if json {
		out = append(out, "--json")
	}
	return out
}

// checkArgs enforces the argument limits before anything starts.
func checkArgs(args []string) error {
	if len(args) > MaxArgs {
		return errorf(CodeArgsTooLarge, "%d arguments given; at most %d are allowed, pass larger input in a file", len(args), MaxArgs)
	}
	total := 0
	for i, a := range args {
		total += len(a)
		if strings.IndexByte(a, 0) >= 0 {
			return errorf(CodeInvalidArgs, "argument %d contains a NUL byte, which cannot be passed to a program", i+1)
		}
	}
	if total > MaxArgBytes {
		return errorf(CodeArgsTooLarge, "arguments total %d bytes; at most %d are allowed, pass larger input in a file", total, MaxArgBytes)
	}
	return nil
}

// buildEnv is a script's whole environment: the base names from parent,
// the parent's names the skill allows (less secrets that neither allow nor
// pass names in full, SPEC §12), then the caller's requested values, each
// of which must be allowed.
func buildEnv(parent, allow, pass []string, req map[string]string) ([]string, error) {
	env := map[string]string{}
	for _, kv := range (envfilter.Policy{Base: baseEnv, Allow: allow, Pass: pass}).Filter(parent) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if _, ok := env["PATH"]; !ok {
		env["PATH"] = defaultPath
	}
	names := make([]string, 0, len(req))
	for k := range req {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, errorf(CodeInvalidArgs, "environment variable name %q is not valid", k)
		}
		if !envfilter.MatchAny(allow, k) {
			hint := "this skill allows no environment variables"
			if len(allow) > 0 {
				hint = "this skill allows only " + strings.Join(allow, ", ")
			}
			return nil, errorf(CodePermissionDenied, "environment variable %s is not allowed (%s); add it to permissions.env in SKILL.md", k, hint)
		}
		if strings.IndexByte(req[k], 0) >= 0 {
			return nil, errorf(CodeInvalidArgs, "the value of environment variable %s contains a NUL byte", k)
		}
		env[k] = req[k]
	}
	env["PYTHONDONTWRITEBYTECODE"] = "1" // scripts never write __pycache__ into an installed skill (SPEC §5)
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// outcome is what a finished script left behind.
type outcome struct {
	stdout      []byte // at most maxOutput bytes
	stdoutTotal int64  // bytes the script wrote
	stderr      []byte // the last stderrTail bytes
	exitCode    int    // -1 when killed by a signal
	signal      syscall.Signal
	timedOut    bool
	duration    time.Duration
}

func (o *outcome) truncated() bool { return o.stdoutTotal > int64(len(o.stdout)) }

// run starts argv in dir with env, in its own process group, and waits for
// it, the timeout or ctx. When the script ends for whatever reason, its
// whole process group is killed, so no descendant outlives it.
func (r *runner) run(ctx context.Context, argv []string, dir string, env []string, pol *sandbox.Policy) (*outcome, error) {
	stdout := &capWriter{max: r.maxOutput}
	stderr := &tailWriter{n: stderrTail}
	cmd := osexec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = r.waitDelay
	start := time.Now()
	if err := running.StartSandboxed(cmd, pol); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, errorf(CodePermissionDenied, "cannot start %s: %v; check that it is executable", argv[0], err)
		}
		return nil, errorf(CodeExecutionFailed, "cannot start %s: %v", argv[0], err)
	}
	w := running.Wait(ctx, cmd, r.timeout)
	// Descendants that left the group (setsid daemons) and lost their
	// parent were adopted by this process, a subreaper (sdk.Serve): end
	// them too. Scripts still running are kept.
	sdk.KillAdopted(running.Has)
	out := &outcome{timedOut: w.TimedOut}
	ctxErr, err := w.Ctx, w.Wait
	out.duration = time.Since(start)
	out.stdout, out.stdoutTotal = stdout.buf.Bytes(), stdout.total
	out.stderr = stderr.bytes()
	if errors.Is(ctxErr, context.DeadlineExceeded) {
		return nil, errorf(CodeTimeout, "the script was stopped with all its child processes because the caller's deadline passed; ask for less work or give the call more time")
	}
	if ctxErr != nil {
		return nil, ctxErr
	}
	var exitErr *osexec.ExitError
	switch {
	case err == nil, errors.Is(err, osexec.ErrWaitDelay):
	case errors.As(err, &exitErr):
		out.exitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.signal = ws.Signal()
		}
	default:
		return nil, errorf(CodeExecutionFailed, "waiting for %s: %v", argv[0], err)
	}
	return out, nil
}

// running tracks the scripts in flight so that a plugin told to stop
// (SIGTERM, its parent gone) can kill their groups first, and so that the
// sweep of adopted orphans never reaps a child os/exec still waits for.
var running = procgroup.NewSet("the exec plugin")

// capWriter keeps the first max bytes and counts (but drops) the rest, so a
// chatty script never blocks on a full pipe and memory stays bounded.
type capWriter struct {
	max   int64
	buf   bytes.Buffer
	total int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	if room := w.max - int64(w.buf.Len()); room > 0 {
		w.buf.Write(p[:min(int64(len(p)), room)])
	}
	return len(p), nil
}

// tailWriter keeps only the last n bytes written.
type tailWriter struct {
	n   int
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	if len(p) >= w.n {
		w.buf = append(w.buf[:0], p[len(p)-w.n:]...)
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.n {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.n:]...)
	}
	return len(p), nil
}

func (w *tailWriter) bytes() []byte {
	if len(w.buf) > w.n {
		return w.buf[len(w.buf)-w.n:]
	}
	return w.buf
}

// text decodes script output as UTF-8, replacing invalid bytes. A rune cut
// by the stdout cap at the end, or by the stderr tail at the start, is
// dropped rather than shown as garbage.
func text(b []byte, cutEnd, cutStart bool) string {
	if cutEnd && len(b) > 0 {
		j := len(b) - 1
		for j > 0 && len(b)-j < utf8.UTFMax && !utf8.RuneStart(b[j]) {
			j--
		}
		if !utf8.FullRune(b[j:]) {
			b = b[:j]
		}
	}
	if cutStart {
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// lookPath is exec.LookPath; a variable so tests can hide uv or python3.
var lookPath = osexec.LookPath
