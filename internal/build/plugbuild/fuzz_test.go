package plugbuild

import (
	"net"
	"path/filepath"
	"testing"
)

// FuzzPackage: whatever plugin.build says, an accepted path stays inside
// the skill.
func FuzzPackage(f *testing.F) {
	for _, s := range []string{"./plugin", "plugin", "cmd/tool/", "../x", "/abs", "a/../../b", ".", "", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := Package(rel)
		if err != nil {
			return
		}
		if !filepath.IsLocal(got) {
			t.Fatalf("Package(%q) = %q, not local", rel, got)
		}
		skill := "/skill"
		if p := filepath.Join(skill, got); p != skill && !isUnder(skill, p) {
			t.Fatalf("Package(%q) = %q leaves the skill", rel, got)
		}
	})
}

func isUnder(dir, p string) bool {
	r, err := filepath.Rel(dir, p)
	return err == nil && filepath.IsLocal(r)
}

// FuzzProxyHosts: whatever GOPROXY and GOSUMDB say, the hosts the build
// may dial are distinct host:port pairs with a port.
func FuzzProxyHosts(f *testing.F) {
	for _, s := range [][2]string{{"https://proxy.golang.org,direct", "sum.golang.org"}, {"off", "off"},
		{"http://[::1]:3000|https://p.example", "sum.example+key https://s.example:8443"}, {"file:///x,https://", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, goproxy, gosumdb string) {
		seen := map[string]bool{}
		for _, h := range proxyHosts(goproxy, gosumdb) {
			host, port, err := net.SplitHostPort(h)
			if err != nil || port == "" || host == "" || seen[h] {
				t.Fatalf("proxyHosts(%q, %q) gave %q", goproxy, gosumdb, h)
			}
			seen[h] = true
		}
	})
}
