//go:build linux && !portable

package sandbox

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestProxy: a declared host:port is reached through the proxy, and
// only it; nothing is reached directly.
func TestProxy(t *testing.T) {
	s := need(t)
	if s.UserNS {
		t.Skip("declared hosts need root (the proxy listens in the namespace the starting thread makes)")
	}
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
}

func TestHostKey(t *testing.T) {
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

func TestProxyEnv(t *testing.T) {
	got := proxyEnv([]string{"PATH=/bin", "https_proxy=http://corp:8080", "NO_PROXY=localhost", "all_proxy=socks5://x", "KEYBOARD=x"}, "127.0.0.1:9")
	want := "PATH=/bin KEYBOARD=x HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy="
	if strings.Join(got, " ") != want {
		t.Errorf("proxyEnv = %q, want %q", got, want)
	}
}

// TestLinesDeclaredHosts: where the proxy cannot be made (unprivileged),
// `agent check` says so instead of pretending.
func TestLinesDeclaredHosts(t *testing.T) {
	has := func(s Status) bool {
		return strings.Contains(strings.Join(s.Lines(), "\n"), "declared hosts need root here (no proxy)")
	}
	if !has(Status{ABI: 7, NetNS: true, UserNS: true, ScopeIPC: true}) {
		t.Error("unprivileged: no line about declared hosts")
	}
	if has(Status{ABI: 7, NetNS: true, ScopeIPC: true}) {
		t.Error("root: a line about declared hosts")
	}
}
