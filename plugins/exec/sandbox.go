package exec

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentskills/agent/internal/sandbox"
)

// policy is what one run of a script of sk may reach (SPEC §8): the
// skill's folder, the system's programs and libraries and the real
// interpreter read-only; its own temp folder (its TMPDIR) and uv's cache
// writable; and what SKILL.md declares in permissions.fs and
// permissions.network.
func (s *service) policy(sk *Skill, in interpreter, tmp, home string) *sandbox.Policy {
	p := &sandbox.Policy{
		Read:    append(append([]string{sk.Dir}, sandbox.System...), in.read...),
		Write:   []string{tmp},
		Network: sk.Network,
	}
	d := sandbox.Declared(sk.FSRead, sk.FSWrite, nil, home, s.cfg.Workspace, tmp)
	p.Read = append(p.Read, d.Read...)
	p.Write = append(p.Write, d.Write...)
	p.Fixed = d.Fixed
	if in.uv {
		cache := filepath.Join(home, ".cache", "uv")
		if d := os.Getenv("UV_CACHE_DIR"); d != "" {
			cache = d
		}
		p.Move = append(p.Move, cache)
		p.Read = append(p.Read, filepath.Join(home, ".local", "share", "uv"))
	}
	return p
}

// realInterpreter resolves a python3 that is a shim (pyenv's runs bash
// and pyenv to pick a version per folder) to the interpreter it picks in
// dir, so that the sandbox grants that interpreter's prefix and the
// script starts without the shim. Asked once per (python3, folder).
func realInterpreter(in interpreter, dir string) interpreter {
	if in.uv {
		if real, err := filepath.EvalSymlinks(in.argv0); err == nil {
			in.read = append(in.read, filepath.Dir(real))
		}
		return in
	}
	key := in.argv0 + "\x00" + dir
	if v, ok := resolved.Load(key); ok {
		r := v.(resolution)
		in.argv0, in.read = r.exe, r.read
		return in
	}
	cmd := exec.Command(in.argv0, "-c", "import os, sys; print(os.path.realpath(sys.executable)); print(sys.prefix); print(sys.base_prefix)")
	cmd.Dir = dir
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 3 || !filepath.IsAbs(lines[0]) {
		// Not a python that answers (a stand-in): grant its folder.
		in.read = append(in.read, filepath.Dir(in.argv0))
		return in
	}
	r := resolution{exe: lines[0], read: []string{filepath.Dir(lines[0]), lines[1], lines[2]}}
	resolved.Store(key, r)
	in.argv0, in.read = r.exe, r.read
	return in
}

type resolution struct {
	exe  string
	read []string
}

var resolved sync.Map

// runConfined runs t's script with args in the sandbox, with a temp
// folder of its own (its TMPDIR, removed afterwards).
func (s *service) runConfined(ctx context.Context, t *target, in interpreter, args []string, wantJSON bool, env []string) (*outcome, error) {
	dir := filepath.Dir(t.script.Path)
	tmp, err := os.MkdirTemp("", "agent-script-")
	if err != nil {
		return nil, errorf(CodeExecutionFailed, "create the script's temp folder: %v", err)
	}
	defer os.RemoveAll(tmp)
	// Python looks for bytecode only under PYTHONPYCACHEPREFIX, never in
	// a __pycache__ beside the scripts: a .pyc planted in the skill
	// folder, which its hash leaves out, never runs (SPEC §12). The
	// prefix is the skill's own, kept between runs: a fresh one per run
	// recompiled every module a script imports, the standard library's
	// too, at each run (0.25-0.9 s). Only this skill's scripts may write
	// it (the sandbox), so what lies there came from code that already
	// runs as this skill.
	pycache := filepath.Join(tmp, "pycache")
	if s.cfg.CacheDir != "" {
		pycache = filepath.Join(s.cfg.CacheDir, "pycache", t.skill.Name)
		if err := os.MkdirAll(pycache, 0o700); err != nil {
			return nil, errorf(CodeExecutionFailed, "create the skill's bytecode cache: %v", err)
		}
	}
	env = append(env[:len(env):len(env)], "PYTHONPYCACHEPREFIX="+pycache)
	if s.cfg.NoSandbox {
		return s.run.run(ctx, in.argv(t.script.Path, args, wantJSON), dir, env, nil)
	}
	home := ""
	out := env[:0:0]
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="):
			continue
		case strings.HasPrefix(kv, "HOME="):
			home = strings.TrimPrefix(kv, "HOME=")
		}
		out = append(out, kv)
	}
	out = append(out, "TMPDIR="+tmp)
	in = realInterpreter(in, dir)
	p := s.policy(&t.skill, in, tmp, home)
	p.Write = append(p.Write, pycache)
	return s.run.run(ctx, in.argv(t.script.Path, args, wantJSON), dir, out, p)
}
