//go:build linux && !portable

package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// escapee is the hostile wrapper's trick: a grandchild that leaves the
// process group (setsid), drops the environment (env -i) and renames
// itself (exec -a), then its parent exits.
const escapee = `( setsid env -i bash -c 'echo $$ >"$0"; exec -a agent-cgroup-escapee sleep 300' "$PIDFILE" & ); exec sleep 300`

func needCgroup(t *testing.T) *Parent {
	t.Helper()
	p, err := Shared()
	if err != nil {
		t.Skipf("cgroup v2 containment not available here: %v", err)
	}
	return p
}

func readPID(t *testing.T, file string) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
			return pid
		}
	}
	t.Fatalf("no pid in %s", file)
	return 0
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

func waitGone(pid int, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); alive(pid); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

func TestGroupKillsEscapedDescendants(t *testing.T) {
	p := needCgroup(t)
	g, err := p.New("test")
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("bash", "-c", escapee)
	cmd.Env = append(os.Environ(), "PIDFILE="+pidFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.Attach(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if !strings.Contains(string(b), strings.TrimPrefix(g.Dir(), "/sys/fs/cgroup/unified")) && !strings.Contains(string(b), filepath.Base(g.Dir())) {
		t.Errorf("escapee's cgroup is %q, want %s", b, g.Dir())
	}
	if err := g.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !waitGone(pid, 5*time.Second) {
		t.Errorf("escapee %d outlived cgroup.kill", pid)
	}
	if _, err := os.Stat(g.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("group folder left behind: %v", err)
	}
}

// TestWatcherKillsSessionWhenHostIsKilled: a host (this test binary in
// helper mode) starts the escapee in its session and is SIGKILLed; the
// watcher must end the escapee, and remove the session's folder.
func TestWatcherKillsSessionWhenHostIsKilled(t *testing.T) {
	needCgroup(t)
	hostKilled(t, nil)
}

// TestWatcherUnprivileged runs the same host as an unprivileged user
// (nobody) in a cgroup delegated to it, the way systemd delegates a
// user's service tree, and as nobody without a delegation, where Detect
// must say why and the fallback is in force.
func TestWatcherUnprivileged(t *testing.T) {
	own := needCgroup(t)
	if os.Getuid() != 0 {
		t.Skip("needs root to delegate a cgroup to another user")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	// A world-readable copy of this test binary.
	bin := filepath.Join(mkdirOpen(t), "cgroup.test")
	copyFile(t, os.Args[0], bin)

	deleg := filepath.Join(filepath.Dir(own.Dir()), fmt.Sprintf("deleg.%d", os.Getpid()))
	if err := os.Mkdir(deleg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(deleg) })
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(deleg, f), 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	wrap := func(cmd *exec.Cmd) {
		// Enter the delegated group first, then drop to nobody.
		args := append([]string{"-c", `echo $$ >"$0/cgroup.procs" && exec "$@"`, deleg, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all"}, cmd.Args...)
		cmd.Path, cmd.Args = "/bin/sh", append([]string{"/bin/sh"}, args...)
	}
	t.Run("delegated", func(t *testing.T) { hostKilled(t, wrap, bin) })
	t.Run("not delegated", func(t *testing.T) {
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", bin, "-test.run=^TestHelperDetect$")
		cmd.Env = append(os.Environ(), "CGROUP_HELPER=detect")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !strings.Contains(string(out), "DETECT no writable cgroup v2 hierarchy") {
			t.Errorf("nobody outside a delegation: %s", out)
		}
	})
}

func mkdirOpen(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "cgroup-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func hostKilled(t *testing.T, wrap func(*exec.Cmd), bin ...string) {
	t.Helper()
	self := os.Args[0]
	if len(bin) > 0 {
		self = bin[0]
	}
	dir := mkdirOpen(t)
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(self, "-test.run=^TestHelperHost$")
	cmd.Env = append(os.Environ(), "CGROUP_HELPER=host", "PIDFILE="+pidFile)
	if wrap != nil {
		wrap(cmd)
	}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	session, ok := strings.CutPrefix(strings.TrimSpace(line), "SESSION ")
	if !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper: %q", line)
	}
	pid := readPID(t, pidFile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !alive(pid) {
		t.Fatal("escapee not running")
	}
	_ = cmd.Process.Kill() // SIGKILL: the host writes nothing
	_ = cmd.Wait()
	go io.Copy(io.Discard, stdout)
	if !waitGone(pid, 10*time.Second) {
		t.Fatalf("escapee %d outlived its SIGKILLed host", pid)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(session); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session folder %s left behind", session)
		}
	}
}

// TestHelperHost is the host that TestWatcher* kill.
func TestHelperHost(t *testing.T) {
	switch os.Getenv("CGROUP_HELPER") {
	case "host":
	default:
		t.Skip("helper process")
	}
	p, err := Shared()
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	g, err := p.New("plugin")
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	cmd := exec.Command("bash", "-c", escapee)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.Attach(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(2)
	}
	fmt.Println("SESSION", p.Dir())
	time.Sleep(time.Minute)
	os.Exit(3)
}

func TestHelperDetect(t *testing.T) {
	if os.Getenv("CGROUP_HELPER") != "detect" {
		t.Skip("helper process")
	}
	if _, err := Shared(); err != nil {
		fmt.Println("DETECT", err)
		return
	}
	fmt.Println("DETECT ok")
}
