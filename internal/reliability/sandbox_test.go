//go:build reliability && linux && !portable

package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentskills/agent/internal/isolation/sandbox"
	"github.com/agentskills/agent/internal/testutil/gittest"
	"github.com/agentskills/agent/internal/testutil/probe"
)

// nobody is the unprivileged user the trials run as a second time.
const nobody = 65534

// probePlugin serves probe.Try as the tool probe. It imports a verbatim
// copy of internal/testutil/probe, which needs only the standard library,
// so the plugin builds against the SDK alone, as any author's does.
func probePlugin(module string) string {
	return `package main

import (
	"context"

	"` + module + `/probe"
	"github.com/agentskills/agent/sdk"
)

type probeIn struct {
	Op  string ` + "`json:\"op\"`" + `
	Arg string ` + "`json:\"arg,omitempty\"`" + `
}

func main() {
	sdk.Serve(sdk.NewSkill(sdk.NewTool("probe", "Try an access and say whether it worked.", func(_ context.Context, in probeIn) (string, error) {
		if err := probe.Try(in.Op, in.Arg); err != nil {
			return "denied: " + err.Error(), nil
		}
		return "allowed", nil
	})))
}
`
}

// probeSkill is a skill with the probe as a script and as a plugin,
// declaring permissions (YAML lines under permissions:, or none).
func probeSkill(t *testing.T, files map[string]string, name, permissions string) {
	t.Helper()
	dir := "skills/" + name
	module := "example.com/" + name + "/plugin"
	for k, v := range gittest.PluginModule(t, dir+"/plugin", module) {
		files[k] = v
	}
	gittest.AddTree(t, files, filepath.Join(moduleRoot, "internal", "testutil", "probe"), dir+"/plugin/probe")
	files[dir+"/plugin/main.go"] = probePlugin(module)
	files[dir+"/scripts/probe.py"] = probe.Python
	m := "---\nname: " + name + "\ndescription: Tries what its sandbox should deny.\nplugin:\n  build: ./plugin\n"
	if permissions != "" {
		m += "permissions:\n" + permissions
	}
	files[dir+"/SKILL.md"] = m + "---\nCall probe, or run the probe script.\n"
}

// attempt is one access a probe tries, and whether the sandbox must let
// it through.
type attempt struct {
	skill, what, op, arg string
	want                 bool
	// watch, called right before the attempt, returns what says whether
	// it arrived (a server's count moved, the file appeared), seen from
	// outside the sandbox; nil: the probe's word only.
	watch func() func() bool
	// why names an outcome that is not "denied when undeclared, allowed
	// when declared" (one of the why* constants), counted apart.
	why string
}

// The outcomes counted apart from "denied undeclared, allowed declared".
const (
	whyTemp    = "its own temp folder, always writable"
	whyUnixGap = "pathname Unix socket reachable undeclared (kernel gap: Landlock ABI < 9 and no seccomp; agent check says so)"
	whyScoped  = "abstract Unix socket denied although network is * (Landlock scope: no declaration grants it)"
	whyHost    = "another process (ptrace, its environ, its /proc entry) or a privilege: denied whatever is declared"
)

// TestReliabilitySandbox: a python3 script (through the exec plugin's
// python3 fallback) and a Go plugin (built by `agent skill add`, run as
// a real subprocess) try to read ~/.ssh/id_ed25519 and another skill's
// folder, write outside their temp folder, and reach the test's loopback
// servers over TCP, MPTCP, UDP, a Unix socket outside their folder and an
// abstract one: all denied when SKILL.md declares nothing, allowed when it
// declares them; a declared host:port is reached through the proxy and
// nothing else (as nobody through the sandbox's shim, which the check at
// exec follows to the plugin). As root, then as nobody (65534) on the
// same install, handed over with chown.
func TestReliabilitySandbox(t *testing.T) {
	st := sandbox.Probe()
	switch {
	case st.ABI == 0:
		t.Skip("the kernel has no Landlock: " + strings.Join(st.Lines(), "; "))
	case !st.NetNS:
		t.Skip("no network namespace can be made here: " + strings.Join(st.Lines(), "; "))
	case os.Getuid() != 0:
		t.Skip("the trials run as root and as nobody: run as root")
	case !userNSAllowedFor():
		t.Skip("nobody cannot make a user and network namespace here (`unshare --user --net` failed: user namespaces disabled, or util-linux missing)")
	}

	home, err := os.MkdirTemp("", "reliability-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	// nobody must reach the agent binary and the home.
	for _, d := range []string{home, filepath.Dir(agentBin)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	agentHome := filepath.Join(home, ".agent")
	key := filepath.Join(home, ".ssh", "id_ed25519")
	outside := filepath.Join(home, "outside")
	for _, d := range []string{filepath.Dir(key), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	abstract := fmt.Sprintf("agent-reliability-%d", os.Getpid())
	srv, err := probe.Serve(filepath.Join(outside, "s.sock"), abstract)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var declaredHits, undeclaredHits atomic.Int64
	declaredSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		declaredHits.Add(1)
		fmt.Fprintln(w, "ok")
	}))
	defer declaredSrv.Close()
	undeclaredSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		undeclaredHits.Add(1)
		fmt.Fprintln(w, "ok")
	}))
	defer undeclaredSrv.Close()
	declaredAddr := strings.TrimPrefix(declaredSrv.URL, "http://")

	files := map[string]string{
		"skills/other/SKILL.md":           "---\nname: other\ndescription: Another skill, whose folder the probes try to read.\n---\nNothing to run.\n",
		"skills/other/references/note.md": "another skill's file\n",
	}
	probeSkill(t, files, "sealed", "")
	probeSkill(t, files, "opened", "  fs:\n    read: [~/.ssh, ~/.agent/skills/other]\n    write: [~/outside]\n  network: [\"*\"]\n")
	probeSkill(t, files, "proxied", "  network: [\""+declaredAddr+"\"]\n")
	repo := gittest.NewRepo(t, files)
	rootEnv := sandboxEnv(home, agentHome, os.Getenv("PATH"))
	for _, s := range []string{"other", "sealed", "opened", "proxied"} {
		must(t, rootEnv, "skill", "add", repo.FileURL(), s, "--trust")
	}
	other := filepath.Join(agentHome, "skills", "other")

	// attempts is the table for one user.
	ns := sandbox.NSProbe().NS
	attempts := func(who string, victim int) []attempt {
		moved := func(key string) func() func() bool {
			return func() func() bool {
				before := srv.Hits(key)
				return func() bool { return srv.Hits(key) > before }
			}
		}
		counter := func(n *atomic.Int64) func() func() bool {
			return func() func() bool {
				before := n.Load()
				return func() bool { return n.Load() > before }
			}
		}
		exists := func(p string) func() func() bool {
			return func() func() bool {
				_ = os.Remove(p)
				return func() bool { _, err := os.Stat(p); return err == nil }
			}
		}
		var as []attempt
		for _, sk := range []string{"sealed", "opened"} {
			open := sk == "opened"
			file := filepath.Join(outside, strings.Fields(who)[0]+"-"+sk)
			as = append(as,
				attempt{sk, "read ~/.ssh/id_ed25519", "read", key, open, nil, ""},
				attempt{sk, "list another skill's folder", "list", other, open, nil, ""},
				attempt{sk, "read another skill's file", "read", filepath.Join(other, "references", "note.md"), open, nil, ""},
				attempt{sk, "write outside its temp folder", "write", file, open, nil, ""},
				attempt{sk, "write its temp folder", "tmp", "", true, nil, whyTemp},
				attempt{sk, "tcp to the host's loopback", "tcp", srv.Addr("tcp"), open, nil, ""},
				attempt{sk, "mptcp to the host's loopback", "mptcp", srv.Addr("mptcp"), open, nil, ""},
				attempt{sk, "udp to the host's loopback", "udp", srv.Addr("udp"), open, nil, ""},
				attempt{sk, "a Unix socket outside its folder", "unix", srv.Addr("unix"), open || !(st.UnixPath || st.Seccomp), nil, ""},
				attempt{sk, "an abstract Unix socket", "unix", srv.Addr("abstract"), false, nil, ""},
			)
		}
		for i := range as {
			a := &as[i]
			switch {
			case a.op == "write":
				a.watch = exists(a.arg)
			case a.op == "tcp" || a.op == "mptcp" || a.op == "udp":
				a.watch = moved(a.op)
			case a.arg == srv.Addr("unix"):
				a.watch = moved("unix")
				if a.skill == "sealed" && !(st.UnixPath || st.Seccomp) {
					a.why = whyUnixGap
				}
			case a.arg == srv.Addr("abstract"):
				a.watch = moved("abstract")
				if a.skill == "opened" {
					a.why = whyScoped
				}
			}
		}
		for _, sk := range []string{"sealed", "opened"} {
			v := strconv.Itoa(victim)
			as = append(as,
				attempt{sk, "ptrace a process of the same user", "ptrace", v, false, nil, whyHost},
				attempt{sk, "read its environ (OPENAI_API_KEY)", "read", "/proc/" + v + "/environ", false, nil, whyHost},
				attempt{sk, "see it in /proc", "seeproc", v, !ns, nil, whyHost},
				attempt{sk, "hold a capability, or lack no_new_privs or seccomp", "privileged", "", false, nil, whyHost},
			)
		}
		as = append(as,
			attempt{"proxied", "the declared host:port through the proxy", "proxy", declaredAddr, true, counter(&declaredHits), ""},
			attempt{"proxied", "an undeclared host:port through the proxy", "proxy", strings.TrimPrefix(undeclaredSrv.URL, "http://"), false, counter(&undeclaredHits), ""},
			attempt{"proxied", "the declared host:port directly", "tcp", declaredAddr, false, counter(&declaredHits), ""},
			attempt{"proxied", "tcp to the host's loopback", "tcp", srv.Addr("tcp"), false, moved("tcp"), ""},
		)
		return as
	}

	trials := func(t *testing.T, who string, cred *syscall.Credential, environ []string) {
		// The victim: a process of the same user holding a secret, as
		// agent and the exec plugin do. Unsandboxed, the same probe
		// attaches to it (the positive control).
		victim := exec.Command("/bin/sleep", "600")
		victim.Env = []string{"OPENAI_API_KEY=sk-victim-secret"}
		victim.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
		py := "python3"
		for _, kv := range environ {
			if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
				for _, d := range filepath.SplitList(dirs) {
					if _, err := os.Stat(filepath.Join(d, "python3")); err == nil {
						py = filepath.Join(d, "python3")
						break
					}
				}
			}
		}
		control := exec.Command(py, "-c", probe.Python, "ptrace="+strconv.Itoa(victim.Process.Pid))
		control.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := control.Output(); err != nil || !strings.Contains(string(out), "allowed") {
			t.Errorf("as %s, unsandboxed, the probe could not ptrace the victim (the control): %v %s", who, err, out)
		}
		check := agentAs(t, cred, environ, "check")
		if !strings.Contains(check.Stdout, "declared hosts through a proxy") || strings.Contains(check.Stdout, "not sandboxed") {
			t.Errorf("agent check as %s: want declared hosts through a proxy and nothing unsandboxed\n%v", who, check)
		}
		var protections []string
		for _, l := range strings.Split(check.Stdout, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "sandbox:") || strings.HasPrefix(l, "containment:") {
				protections = append(protections, l)
			}
		}
		var n, deniedUndeclared, allowedDeclared, wrong, unseen int
		apart := map[string]int{}
		for _, kind := range []string{"script", "plugin"} {
			for _, a := range attempts(who, victim.Process.Pid) {
				n++
				var arrived func() bool
				if a.watch != nil {
					arrived = a.watch()
				}
				got, out := probeOnce(t, cred, environ, kind, a)
				reached := got
				if arrived != nil {
					reached = arrived()
				}
				label := fmt.Sprintf("%s %s (%s): %s", a.skill, kind, a.what, out)
				switch {
				case got != a.want:
					wrong++
					t.Errorf("as %s: %s; want allowed=%v", who, label, a.want)
				case reached != got:
					unseen++
					t.Errorf("as %s: %s; but the other side saw reached=%v", who, label, reached)
				case a.why != "":
					apart[a.why]++
					t.Logf("as %s: %s [%s]", who, label, a.why)
				case got:
					allowedDeclared++
				default:
					deniedUndeclared++
				}
			}
		}
		var rest []string
		for _, why := range []string{whyTemp, whyScoped, whyUnixGap, whyHost} {
			if apart[why] > 0 {
				rest = append(rest, fmt.Sprintf("%d %s", apart[why], why))
			}
		}
		result("sandbox as "+who, "%d attempts by a python3 script and a Go plugin: %d denied undeclared, %d allowed declared; %s; %d wrong, %d where the far side (server, file) disagreed with the probe",
			n, deniedUndeclared, allowedDeclared, strings.Join(rest, "; "), wrong, unseen)
		result("sandbox as "+who+": agent check", "%s", strings.Join(protections, " | "))
	}

	t.Run("root", func(t *testing.T) { trials(t, "root", nil, rootEnv) })

	// The same install, handed over to nobody: its key, its state, its
	// folders (the module cache `go build` needs sits in root's home,
	// which nobody cannot read, so the install stays root's work).
	err = filepath.WalkDir(home, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	})
	if err != nil {
		t.Fatalf("hand the home over to nobody: %v", err)
	}
	cred := &syscall.Credential{Uid: nobody, Gid: nobody}
	t.Run("unprivileged", func(t *testing.T) {
		trials(t, "nobody (uid 65534)", cred, sandboxEnv(home, agentHome, "/usr/local/go/bin:/usr/bin:/bin"))
	})
}

// userNSAllowedFor says whether an unprivileged user may make a user
// and a network namespace, by asking util-linux's unshare as nobody (Go
// cannot: it sets the uid inside the new, unmapped namespace).
func userNSAllowedFor() bool {
	cmd := exec.Command("unshare", "--user", "--net", "/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return cmd.Run() == nil
}

// sandboxEnv is an agent environment with HOME and AGENT_HOME of its
// own: ~ in permissions.fs is that HOME.
func sandboxEnv(home, agentHome, path string) []string {
	e := []string{
		"AGENT_HOME=" + agentHome,
		"HOME=" + home,
		"PATH=" + path,
		"LANG=C.UTF-8",
		"TMPDIR=/tmp",
		"AGENT_SKILLS=all",
	}
	return append(e, goEnv...)
}

// agentAs runs the agent as cred's user (nil: this process's).
func agentAs(t *testing.T, cred *syscall.Credential, environ []string, args ...string) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := agentCmd(ctx, environ, "", args...)
	cmd.SysProcAttr.Credential = cred
	cmd.Dir = "/"
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("agent %q did not finish in two minutes", args)
	}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("agent %q: %v", args, err)
	}
	return finished(cmd, args, stdout, stderr)
}

// probeOnce makes one attempt through the script or the plugin of
// a.skill and says whether it was let through, with the probe's words.
func probeOnce(t *testing.T, cred *syscall.Credential, environ []string, kind string, a attempt) (bool, string) {
	t.Helper()
	var r run
	if kind == "script" {
		args, _ := json.Marshal(map[string]any{"skill_name": a.skill, "script_name": "probe", "args": []string{a.op + "=" + a.arg}})
		r = agentAs(t, cred, environ, "call", "script_run", string(args))
	} else {
		args, _ := json.Marshal(map[string]string{"op": a.op, "arg": a.arg})
		r = agentAs(t, cred, environ, "call", a.skill+".probe", string(args))
	}
	c := parseCall(t, r)
	if !c.Success {
		t.Fatalf("the %s of %s did not run: %v", kind, a.skill, r)
	}
	out := string(c.Result)
	if kind == "script" {
		var m map[string]string
		if err := json.Unmarshal(bytes.TrimSpace(c.Result), &m); err != nil {
			// script_run may wrap the script's JSON; find it.
			var w struct {
				Result map[string]string `json:"result"`
			}
			if json.Unmarshal(c.Result, &w) != nil || w.Result == nil {
				t.Fatalf("the probe script's output is no JSON object: %s", c.Result)
			}
			m = w.Result
		}
		out = m[a.op+"="+a.arg]
	} else {
		_ = json.Unmarshal(c.Result, &out)
	}
	return out == "allowed", out
}
