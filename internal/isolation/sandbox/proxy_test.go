//go:build linux && !portable

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestProxy: a declared host:port is reached through the proxy, and
// only it; nothing is reached directly.
func TestProxy(t *testing.T) {
	t.Parallel()
	s := need(t)
	bin, binDir := self(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintln(w, "ok")
	}))
	defer srv.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the undeclared server got %s %s", r.Method, r.URL)
	}))
	defer other.Close()
	declared := strings.TrimPrefix(srv.URL, "http://")
	undeclared := strings.TrimPrefix(other.URL, "http://")
	p := Policy{Read: append([]string{binDir}, SystemLibs...), Network: []string{declared}}

	if ok, out := run(t, bin, p, "proxy", declared); !ok {
		t.Fatalf("the declared host through the proxy: %s", out)
	}
	if hits.Load() != 1 {
		t.Fatalf("the declared server saw %d requests, want 1", hits.Load())
	}
	ok, out := run(t, bin, p, "proxy", undeclared)
	if ok || !strings.Contains(out, "403") {
		t.Errorf("an undeclared host through the proxy: allowed = %v, want a 403: %s", ok, out)
	}
	if ok, out := run(t, bin, p, "tcp", declared); ok {
		t.Errorf("the declared host without the proxy was reached: %s", out)
	}
	if ok, out := run(t, bin, Policy{Read: p.Read}, "proxy", declared); ok || !strings.Contains(out, "no proxy") {
		t.Errorf("no declared host, yet a proxy: %s", out)
	}
	if hits.Load() != 1 {
		t.Errorf("the declared server saw %d requests, want 1", hits.Load())
	}
	if s.UserNS {
		// Unprivileged, through the shim: the target keeps none of the
		// capabilities the shim had in its user namespace.
		withProc := p
		withProc.Read = append(slices.Clone(p.Read), "/proc")
		if ok, out := run(t, bin, withProc, "bare", ""); !ok {
			t.Errorf("the target kept privileges: %s", out)
		}
		if ok, out := run(t, bin, p, "lo-up", ""); ok {
			t.Errorf("the target could set its lo up (CAP_NET_ADMIN): %s", out)
		}
		// Without namespaces the parent-death signal survives both
		// execs: the target dies with the thread that started it. (In
		// them, the shim is its init: TestHostile's orphans.)
		if !NSProbe().NS {
			if ok, out := run(t, bin, p, "pdeathsig", ""); !ok {
				t.Errorf("the target lost its parent-death signal: %s", out)
			}
		}
	}
	// A program that cannot be executed fails the start with its errno,
	// as os/exec says it (unprivileged: the shim's exec reports it).
	cmd := exec.Command(filepath.Join(binDir, "missing"))
	release, err := Start(cmd, p, (*exec.Cmd).Start)
	if err == nil {
		_ = cmd.Wait()
		release()
		t.Fatal("a missing program started")
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "fork/exec" || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("a missing program: %v (%T), want fork/exec ...: ENOENT", err, err)
	}
}

func TestHostKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, def, want string
	}{
		{"host and port", "API.example.com:443", "", "api.example.com:443"},
		{"v6", "[::1]:8080", "", "[::1]:8080"},
		{"no port", "example.com", "", ""},
		{"default port", "example.com", "80", "example.com:80"},
		{"bare v6", "::1", "80", ""},
		{"empty host", ":443", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := hostKey(tc.in, tc.def)
			if got != tc.want {
				t.Errorf("hostKey(%q, %q) = %q, want %q", tc.in, tc.def, got, tc.want)
			}
		})
	}
}

// TestLinesDeclaredHosts: declared hosts work unprivileged too (the
// shim), so `agent check` has no line about them either way.
func TestLinesDeclaredHosts(t *testing.T) {
	t.Parallel()
	for _, s := range []Status{{ABI: 7, NetNS: true, UserNS: true, ScopeIPC: true, Seccomp: true}, {ABI: 7, NetNS: true, ScopeIPC: true, Seccomp: true}} {
		if l := s.Lines(); len(l) != 0 {
			t.Errorf("%+v: %q, want no line", s, l)
		}
	}
}
