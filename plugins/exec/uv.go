package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// uvEnv prepares the environment of t's script with uv and returns the
// interpreter to run the script with: the environment's python, and the
// environment's folder (which the script may only read).
//
// `uv run --script` would run the script itself with uv's whole cache
// writable (uv links packages in from it, and locks it), so a script
// could rewrite a cached package, or plant a .pth file in an
// environment, that a later run of any skill imports. Instead two uv
// steps run in the sandbox with the cache writable and no skill code:
// `uv sync --script` (which installs what the script declares) and
// `uv python find --script` (which names the environment's python). The
// script then runs with that python and the cache out of reach but for
// its own environment, read-only. What can still write the cache is a
// dependency's build backend during the sync (an sdist's setup.py).
func (s *service) uvEnv(ctx context.Context, t *target, uv interpreter, dir string, env []string, home, tmp string) (interpreter, string, error) {
	uv = realInterpreter(uv, dir)
	// The sandbox grants only folders that exist.
	if err := os.MkdirAll(uvCache(home), 0o700); err != nil && !s.cfg.NoSandbox {
		return interpreter{}, "", errorf(CodeExecutionFailed, "create uv's cache folder: %v", err)
	}
	step := func(args ...string) (*outcome, error) {
		argv := append([]string{uv.argv0}, args...)
		if s.cfg.NoSandbox {
			return s.run.run(ctx, argv, dir, env, nil)
		}
		return s.run.run(ctx, argv, dir, env, s.policy(&t.skill, uv, tmp, home))
	}
	out, err := step("sync", "--script", t.script.Path)
	if err == nil && out.exitCode != 0 {
		return interpreter{}, "", errorf(CodeExecutionFailed, "uv could not prepare the script's environment (uv sync --script exited with code %d): %s",
			out.exitCode, strings.TrimSpace(text(out.stderr, false, true)))
	}
	if err != nil {
		return interpreter{}, "", err
	}
	out, err = step("python", "find", "--script", t.script.Path)
	if err != nil {
		return interpreter{}, "", err
	}
	py := strings.TrimSpace(string(out.stdout))
	if out.exitCode != 0 || !filepath.IsAbs(py) {
		return interpreter{}, "", errorf(CodeExecutionFailed, "uv did not name the script's python (uv python find --script exited with code %d): %s",
			out.exitCode, strings.TrimSpace(text(out.stderr, false, true)))
	}
	venv := filepath.Dir(filepath.Dir(py))
	if _, err := os.Stat(filepath.Join(venv, "pyvenv.cfg")); err != nil {
		// Not an environment (uv may name a plain interpreter for a
		// script without dependencies): run it as python3 would be.
		return realInterpreter(interpreter{argv0: py}, dir), "", nil
	}
	// The environment's python links to the interpreter it was made
	// from; that one (outside the cache) is asked about itself, never
	// the environment, whose site-packages the sync may have written.
	base, err := filepath.EvalSymlinks(py)
	if err != nil || within(base, venv) {
		return interpreter{}, "", errorf(CodeExecutionFailed, "the script's environment %s has no python linked from outside it", venv)
	}
	r := realInterpreter(interpreter{argv0: base}, dir)
	return interpreter{argv0: py, venv: true, read: r.read, info: r.info}, venv, nil
}

// withVenv is env as `uv run` gives it to a script: VIRTUAL_ENV set and
// the environment's bin first on PATH.
func withVenv(env []string, venv string) []string {
	if venv == "" {
		return env
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + filepath.Join(venv, "bin") + ":" + p
		}
		out = append(out, kv)
	}
	return append(out, "VIRTUAL_ENV="+venv)
}
