package base

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentskills/agent/internal/isolation/sandbox"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentskills/agent/internal/isolation/procgroup"
)

// ExecInput is exec's input.
type ExecInput struct {
	Command   string            `json:"command" description:"Program to run: a name looked up on PATH, or a path. No shell: use shell_command for pipes and globs"`
	Args      []string          `json:"args,omitempty" description:"Arguments, passed as they are"`
	Cwd       string            `json:"cwd,omitempty" description:"Working folder inside the workspace (default the workspace)"`
	Env       map[string]string `json:"env,omitempty" description:"Variables added to the agent's environment"`
	TimeoutMS int               `json:"timeout_ms,omitempty" description:"Kill the command after this many milliseconds (default 60000, at most 600000)"`
}

// ShellInput is shell_command's input.
type ShellInput struct {
	Command   string `json:"command" description:"A /bin/sh command line"`
	Workdir   string `json:"workdir,omitempty" description:"Working folder inside the workspace (default the workspace)"`
	TimeoutMS int    `json:"timeout_ms,omitempty" description:"Kill the command after this many milliseconds (default 60000, at most 600000)"`
}

// ExecResult is the result of exec and shell_command for a command that
// ran to its end, whatever its exit code.
type ExecResult struct {
	ExitCode   int    `json:"exit_code"` // -1 when a signal ended it
	Signal     string `json:"signal,omitempty"`
	Output     string `json:"output"` // stdout and stderr as written, middle-out truncated
	Truncated  bool   `json:"truncated,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

func (s *service) exec(ctx context.Context, in ExecInput) (ExecResult, string, error) {
	if in.Command == "" {
		return ExecResult{}, "", errorf(CodeInvalidArgs, "command is empty; give a program name such as \"go\" and its args")
	}
	return s.run(ctx, in.Command, in.Args, in.Cwd, in.Env, in.TimeoutMS)
}

func (s *service) shell(ctx context.Context, in ShellInput) (ExecResult, string, error) {
	if strings.TrimSpace(in.Command) == "" {
		return ExecResult{}, "", errorf(CodeInvalidArgs, "command is empty; give a shell command line such as \"ls -la | head\"")
	}
	if shellPath == "" {
		return ExecResult{}, "", errorf(CodeInvalidArgs, "shell_command needs a POSIX shell (/bin/sh), which Windows does not have; use exec with the program and its arguments (for a cmd.exe builtin: command \"cmd.exe\", args [\"/c\", ...])")
	}
	return s.run(ctx, shellPath, []string{"-c", in.Command}, in.Workdir, nil, in.TimeoutMS)
}

func (s *service) run(ctx context.Context, command string, args []string, cwd string, extra map[string]string, timeoutMS int) (ExecResult, string, error) {
	if timeoutMS < 0 {
		return ExecResult{}, "", errorf(CodeInvalidArgs, "timeout_ms must be positive")
	}
	timeout := s.cfg.Timeout
	if timeoutMS > 0 {
		timeout = min(time.Duration(timeoutMS)*time.Millisecond, MaxTimeout)
	}
	for i, a := range append([]string{command}, args...) {
		if strings.IndexByte(a, 0) >= 0 {
			return ExecResult{}, "", errorf(CodeInvalidArgs, "argument %d contains a NUL byte, which cannot be passed to a program", i)
		}
	}
	env, err := s.environ(extra)
	if err != nil {
		return ExecResult{}, "", err
	}
	dir, err := s.workdir(cwd)
	if err != nil {
		return ExecResult{}, "", err
	}
	path := command
	if !strings.ContainsAny(command, pathSeparators) {
		if path, err = lookPath(command, env); err != nil {
			return ExecResult{}, "", err
		}
	}
	env, pol, cleanup, err := s.confine(env)
	if err != nil {
		return ExecResult{}, "", err
	}
	defer cleanup()
	out := newMiddleOut(s.cfg.MaxOutput)
	cmd := &osexec.Cmd{Path: path, Args: append([]string{command}, args...), Env: env, Dir: dir, Stdout: out, Stderr: out}
	cmd.WaitDelay = 2 * time.Second
	start := time.Now()
	if err := running.StartSandboxed(cmd, pol); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return ExecResult{}, "", errorf(CodePermissionDenied, "cannot start %s: %v; check that it is an executable file", command, err)
		}
		return ExecResult{}, "", errorf(CodeExecutionFailed, "cannot start %s: %v; check the command name and that it exists in %s", command, err, shownDir(cwd))
	}
	w := running.Wait(ctx, cmd, timeout) // kills the command if still running, and whatever it left behind
	timedOut, ctxErr, werr := w.TimedOut, w.Ctx, w.Wait
	res := ExecResult{Output: out.String(), Truncated: out.truncated(), DurationMS: time.Since(start).Milliseconds()}
	switch {
	case timedOut:
		return ExecResult{}, "", errorf(CodeTimeout, "%s did not finish within %s and was killed with its child processes; raise timeout_ms (at most %d) or do less per call. Its last output:\n%s",
			command, timeout, MaxTimeout.Milliseconds(), MiddleOut(lastBytes(res.Output, 4096), 4096))
	case errors.Is(ctxErr, context.DeadlineExceeded):
		return ExecResult{}, "", errorf(CodeTimeout, "%s was killed with its child processes because the call's deadline passed; give the call more time or lower timeout_ms", command)
	case ctxErr != nil:
		return ExecResult{}, "", ctxErr
	}
	var exitErr *osexec.ExitError
	switch {
	case werr == nil, errors.Is(werr, osexec.ErrWaitDelay):
	case errors.As(werr, &exitErr):
		res.ExitCode = exitErr.ExitCode()
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		} else if sig, ok := sandbox.Signaled(cmd); ok {
			res.ExitCode, res.Signal = -1, sig.String()
		}
	default:
		return ExecResult{}, "", errorf(CodeExecutionFailed, "waiting for %s: %v", command, werr)
	}
	msg := fmt.Sprintf("exit code %d", res.ExitCode)
	if res.Signal != "" {
		msg = "ended by signal: " + res.Signal
	}
	if res.Truncated {
		msg += fmt.Sprintf("; output was longer than %d bytes and its middle was left out (see the marker); redirect it to a file and read_file or grep_files it", s.cfg.MaxOutput)
	}
	return res, msg, nil
}

func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[len(s)-n:], "")
}

func shownDir(cwd string) string {
	if cwd == "" {
		return "the workspace"
	}
	return cwd
}

// environ is the host's environment (less secrets: the host filtered the
// plugin's) with the call's variables on top.
func (s *service) environ(extra map[string]string) ([]string, error) {
	base := s.cfg.Environ
	if base == nil {
		base = os.Environ()
	}
	base = commandEnviron(base)
	env := make(map[string]string, len(base)+len(extra))
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for k, v := range extra {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, errorf(CodeInvalidArgs, "environment variable name %q is not valid; use letters, digits and _", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, errorf(CodeInvalidArgs, "the value of environment variable %s contains a NUL byte", k)
		}
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out, nil
}

// workdir resolves a command's folder through the workspace root and
// returns the kernel's path of what was opened.
func (s *service) workdir(cwd string) (string, error) {
	w, err := s.fs()
	if err != nil {
		return "", err
	}
	defer w.Close()
	if cwd == "" {
		cwd = "."
	}
	f, _, err := w.open(cwd)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", w.fail(cwd, err)
	}
	if !fi.IsDir() {
		return "", errorf(CodeNotFound, "%s is not a folder; give a folder inside the workspace as the working folder", cwd)
	}
	if p, ok := realPath(f); ok {
		return p, nil
	}
	return filepath.Join(w.real, cwd), nil
}

// lookPath finds name on the PATH of env (the command's own environment,
// not the plugin's).
func lookPath(name string, env []string) (string, error) {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p, ok := findProgram(dir, name, programExts); ok {
			return p, nil
		}
	}
	return "", errorf(CodeExecutionFailed, "command %q was not found on PATH; check its name, give its path, or use shell_command", name)
}

// running tracks the process groups of commands in flight so that a plugin
// told to stop can kill them first.
var running = procgroup.NewSet("the base plugin")

// findProgram finds name in dir. With exts nil (Unix) the file must carry
// an execute bit; with exts (Windows, where no file has one) a name
// without an extension is tried with each of them, and a name with one
// must end in one of them.
func findProgram(dir, name string, exts []string) (string, bool) {
	candidates := []string{name}
	if exts != nil {
		if ext := filepath.Ext(name); ext == "" {
			candidates = candidates[:0]
			for _, e := range exts {
				candidates = append(candidates, name+e)
			}
		} else if !slices.ContainsFunc(exts, func(e string) bool { return strings.EqualFold(e, ext) }) {
			return "", false
		}
	}
	for _, c := range candidates {
		p := filepath.Join(dir, c)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || (exts == nil && fi.Mode()&0o111 == 0) {
			continue
		}
		return p, true
	}
	return "", false
}
