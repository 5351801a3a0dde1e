//go:build linux && !portable

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/agentskills/agent/internal/isolation/sandbox/confine"
	testprobe "github.com/agentskills/agent/internal/testutil/probe"
)

// TestMain doubles as the sandboxed program: with SANDBOX_HELPER=op it
// tries op on its argument and exits 0 when the kernel let it.
func TestMain(m *testing.M) {
	if op := os.Getenv("SANDBOX_HELPER"); op != "" {
		if err := helper(op, os.Args[1]); err != nil {
			fmt.Println("DENIED", err)
			os.Exit(1)
		}
		fmt.Println("ALLOWED")
		os.Exit(0)
	}
	if err := writeSelf(); err != nil {
		fmt.Fprintln(os.Stderr, "copy the test binary:", err)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(selfDir)
	os.Exit(code)
}

// helperEnv is the environment of a helper: kv, and GORACE when set, so
// that a -race helper does not sleep a second before it exits (make test
// sets atexit_sleep_ms=0).
func helperEnv(kv ...string) []string {
	if v, ok := os.LookupEnv("GORACE"); ok {
		kv = append(kv, "GORACE="+v)
	}
	return kv
}

// helper is testprobe.Try, and what only this package's tests try:
// signal the host, set lo up, and "bare" (no capability left, and
// no_new_privs set).
func helper(op, arg string) error {
	switch op {
	case "signal":
		var pid int
		fmt.Sscan(arg, &pid)
		return syscall.Kill(pid, syscall.SIGUSR1)
	case "lo-up":
		return confine.LoopbackUp()
	case "pdeathsig":
		var sig int
		if err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err != nil {
			return err
		}
		if sig != int(syscall.SIGKILL) {
			return fmt.Errorf("parent-death signal %d, want SIGKILL", sig)
		}
		return nil
	case "bare":
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		wants := []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1"}
		if arg != "user-fallback" {
			// A user outside namespaces cannot empty its bounding set
			// (no CAP_SETPCAP); no_new_privs keeps it from mattering.
			wants = append(wants, "CapBnd:\t0000000000000000")
		}
		if arg == "all" || arg == "user-fallback" {
			wants = append(wants, "Seccomp:\t2")
		}
		for _, want := range wants {
			if !strings.Contains(string(b), want+"\n") {
				return fmt.Errorf("no %q in /proc/self/status:\n%s", want, b)
			}
		}
		return nil
	case "ptrace":
		var pid int
		fmt.Sscan(arg, &pid)
		if err := unix.PtraceSeize(pid); err != nil {
			return err
		}
		return nil
	case "procs":
		// Every process this child can see in /proc, printed; fails
		// when it sees one that is not in its own namespace (arg: the
		// host's pid, which must not be there).
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		var pids []string
		for _, e := range ents {
			if e.Name()[0] >= '0' && e.Name()[0] <= '9' {
				pids = append(pids, e.Name())
			}
		}
		fmt.Println("PIDS", strings.Join(pids, " "))
		if slices.Contains(pids, arg) {
			return fmt.Errorf("sees the host's pid %s", arg)
		}
		return nil
	case "daemon":
		// A setsid child that outlives this one, its pid written to arg.
		cmd := exec.Command("/proc/self/exe", "x")
		cmd.Env = helperEnv("SANDBOX_HELPER=sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return err
		}
		return os.WriteFile(arg, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	case "sleep":
		time.Sleep(time.Hour)
		return nil
	}
	return testprobe.Try(op, arg)
}

// selfBin is a copy of the test binary that anyone may read and run, in
// a folder of its own, so that a policy can grant it without granting
// /tmp. TestMain writes it before any test runs: an executable written
// while parallel tests fork can fail to exec with ETXTBSY (a child holds
// the write descriptor for a moment; golang/go#22315).
var selfBin, selfDir string

func writeSelf() error {
	dir, err := os.MkdirTemp("", "sandbox-bin")
	if err != nil {
		return err
	}
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		return err
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		return err
	}
	selfBin, selfDir = bin, dir
	return os.Chmod(dir, 0o755)
}

func self(t testing.TB) (bin, dir string) {
	t.Helper()
	if selfBin == "" {
		t.Fatal("TestMain wrote no copy of the test binary")
	}
	return selfBin, selfDir
}

func run(t *testing.T, bin string, p Policy, op, arg string) (bool, string) {
	t.Helper()
	cmd := exec.Command(bin, arg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = helperEnv("SANDBOX_HELPER=" + op)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := Start(cmd, p, (*exec.Cmd).Start)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	err = cmd.Wait()
	release()
	return err == nil && strings.Contains(out.String(), "ALLOWED"), out.String()
}

func need(t testing.TB) Status {
	t.Helper()
	s := Probe()
	if s.ABI == 0 {
		t.Skip("the kernel has no Landlock")
	}
	if !s.NetNS {
		t.Skip("no network namespace can be made here (user namespaces disabled)")
	}
	return s
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	s := need(t)
	netns := NSProbe().NetNS
	bin, binDir := self(t)
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	outside := t.TempDir()

	sock := filepath.Join(outside, "s.sock")
	srv, err := testprobe.Serve(sock, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	base := Policy{Read: append([]string{binDir}, SystemLibs...), Write: []string{tmp}}
	declare := func(f func(*Policy)) Policy {
		p := base
		p.Read = append([]string(nil), p.Read...)
		p.Write = append([]string(nil), p.Write...)
		f(&p)
		return p
	}
	all := declare(func(p *Policy) {
		p.Read = append(p.Read, secret)
		p.Write = append(p.Write, outside)
		p.Network = []string{"*"}
	})
	tests := []struct {
		name    string
		op, arg string
		p       Policy
		want    bool
	}{
		{"read a secret", "read", secret, base, false},
		{"read a declared file", "read", secret, all, true},
		{"write the temp folder", "write", filepath.Join(tmp, "f"), base, true},
		{"write outside", "write", filepath.Join(outside, "f"), base, false},
		{"write a declared folder", "write", filepath.Join(outside, "f"), declare(func(p *Policy) { p.Write = append(p.Write, outside) }), true},
		{"tcp to loopback", "tcp", srv.Addr("tcp"), base, false},
		{"tcp with network *", "tcp", srv.Addr("tcp"), all, true},
		{"mptcp to loopback", "mptcp", srv.Addr("mptcp"), base, !netns},
		{"mptcp with network *", "mptcp", srv.Addr("mptcp"), all, true},
		{"udp to loopback", "udp", srv.Addr("udp"), base, !netns && !s.UDP},
		{"udp with network *", "udp", srv.Addr("udp"), all, true},
		{"signal the host", "signal", fmt.Sprint(os.Getpid()), all, !s.ScopeIPC},
		// Its own loopback is up: the shim sets it up, as root and as a
		// user. Without a network namespace (the fallback) Landlock's
		// port rules are all there is: TCP is denied, UDP and MPTCP are
		// not (Status.Lines says so).
		{"its own loopback", "loopback", "", base, netns},
		{"loopback with network *", "loopback", "", all, true},
	}
	if s.UnixPath || s.Seccomp {
		type tc = struct {
			name    string
			op, arg string
			p       Policy
			want    bool
		}
		serves := declare(func(p *Policy) { p.Serves = true })
		tests = append(tests,
			tc{"unix socket outside", "unix", sock, base, false},
			tc{"unix socket outside, serving", "unix", sock, serves, false},
			tc{"unix socket with network *", "unix", sock, all, true})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, out := run(t, bin, tc.p, tc.op, tc.arg)
			if got != tc.want {
				t.Errorf("allowed = %v, want %v: %s", got, tc.want, out)
			}
		})
	}
}

// TestHostStaysFree: the thread that enforced the rules is gone; the
// test process can still read what the child could not.
func TestHostStaysFree(t *testing.T) {
	t.Parallel()
	need(t)
	bin, binDir := self(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if ok, out := run(t, bin, Policy{Read: append([]string{binDir}, SystemLibs...)}, "read", secret); ok {
			t.Fatalf("child read the secret: %s", out)
		}
		if _, err := os.ReadFile(secret); err != nil {
			t.Fatalf("the host lost access: %v", err)
		}
	}
	// Whatever threads the runtime runs goroutines on now, none of them
	// is restricted: a restricted thread ended with its goroutine (or,
	// the main thread, is parked for good and runs no Go code).
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			_, err := os.ReadFile(secret)
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Fatalf("a host thread lost access: %v", err)
		}
	}
}

// TestUnprivileged runs TestPolicy, TestHostStaysFree and TestProxy
// again as nobody (root passes everything): the network namespace then
// needs a user namespace, Landlock needs no_new_privs, and declared
// hosts need the shim.
func TestUnprivileged(t *testing.T) {
	t.Parallel()
	need(t)
	if os.Getuid() != 0 {
		t.Skip("already unprivileged")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	bin, _ := self(t)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
		bin, "-test.run=^(TestPolicy|TestHostStaysFree|TestProxy|TestHostile|TestDeclaredLinks|TestFallback)$", "-test.v", "-test.parallel=4")
	cmd.Env = helperEnv("PATH=/usr/bin:/bin", "TMPDIR=/tmp", "HOME=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("--- SKIP")) || !bytes.Contains(out, []byte("--- PASS: TestPolicy")) || !bytes.Contains(out, []byte("--- PASS: TestProxy")) || !bytes.Contains(out, []byte("--- PASS: TestHostile")) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
