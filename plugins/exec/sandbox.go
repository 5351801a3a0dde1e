package exec

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentskills/agent/internal/isolation/sandbox"
)

// uvCache is uv's cache folder for a script whose HOME is home.
func uvCache(home string) string {
	if d := os.Getenv("UV_CACHE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "uv")
	}
	return filepath.Join(home, ".cache", "uv")
}

// policy is what one run of a script of sk may reach (SPEC §8): the
// skill's folder, the system's programs and libraries and the real
// interpreter read-only; its own temp folder (its TMPDIR) writable, and
// uv's cache only when in is uv itself preparing an environment (a
// script never writes it); and what SKILL.md declares in permissions.fs and
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
		p.Move = append(p.Move, uvCache(home))
	}
	if in.uv || in.venv {
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
		in.argv0, in.read, in.info = r.exe, r.read, r.info
		return in
	}
	info, ok := probePython(in.argv0, dir)
	if !ok {
		// Not a python that answers (a stand-in): grant its folder.
		in.read = append(in.read, filepath.Dir(in.argv0))
		return in
	}
	r := resolution{exe: info.exe, read: []string{filepath.Dir(info.exe), info.prefix, info.basePrefix}, info: info}
	resolved.Store(key, r)
	in.argv0, in.read, in.info = r.exe, r.read, r.info
	return in
}

type resolution struct {
	exe  string
	read []string
	info pyInfo
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
	home := ""
	out := env[:0:0]
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "TMPDIR="):
			if s.cfg.NoSandbox {
				out = append(out, kv)
			}
			continue
		case strings.HasPrefix(kv, "HOME="):
			home = strings.TrimPrefix(kv, "HOME=")
		}
		out = append(out, kv)
	}
	if !s.cfg.NoSandbox {
		out = append(out, "TMPDIR="+tmp)
	}
	var venv string
	if in.uv {
		// uv prepares the environment with its cache writable; the
		// script then runs with the environment's python and no write
		// access to the cache, so nothing it plants there is imported by
		// a later run (see uvEnv).
		if in, venv, err = s.uvEnv(ctx, t, in, dir, out, home, tmp); err != nil {
			return nil, err
		}
		out = withVenv(out, venv)
	} else {
		in = realInterpreter(in, dir)
	}
	// See bytecode.go: Python reads bytecode only from a folder that
	// only this plugin writes, and writes none.
	pycache := s.bytecode(s.cfg.CacheDir, in.info)
	if pycache == "" {
		pycache = filepath.Join(tmp, "pycache")
	}
	out = append(out, "PYTHONPYCACHEPREFIX="+pycache)
	argv := in.argv(t.script.Path, args, wantJSON)
	if s.cfg.NoSandbox {
		return s.run.run(ctx, argv, dir, out, nil)
	}
	p := s.policy(&t.skill, in, tmp, home)
	p.Read = append(p.Read, pycache)
	if venv != "" {
		p.Read = append(p.Read, venv)
	}
	return s.run.run(ctx, argv, dir, out, p)
}
