//go:build linux && !portable

package confine

import (
	"strings"
	"testing"
)

func TestSpec(t *testing.T) {
	s := Spec{Ruleset: 3, Flags: 1, Sock: 4, Filter: 3, Listen: true, ExecFD: 5, Path: "/a,b/c"}
	got, err := ParseSpec(s.String())
	if err != nil || got != s {
		t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", s.String(), got, err, s)
	}
	for _, bad := range []string{"", "1,2,3", "x,0,4,-1,true,-1,/bin/true", "-1,0,1,-1,true,-1,/bin/true", "-1,0,4,7,true,-1,/bin/true", "-1,0,4,-1,true,-1,", "-2,0,4,-1,true,-1,/bin/true", "-1,0,4,-2,true,-1,/bin/true", "-1,0,4,-1,true,-2,/bin/true"} {
		if _, err := ParseSpec(bad); err == nil {
			t.Errorf("ParseSpec(%q) accepted", bad)
		}
	}
}

// FuzzSpec: whatever the shim accepts, it writes back the same.
func FuzzSpec(f *testing.F) {
	f.Add("3,1,4,3,true,5,/a,b/c")
	f.Add("-1,0,4,-1,false,-1,/bin/true")
	f.Add("malformed")
	f.Fuzz(func(t *testing.T, v string) {
		s, err := ParseSpec(v)
		if err != nil {
			return
		}
		again, err := ParseSpec(s.String())
		if err != nil || again != s {
			t.Fatalf("%q parsed to %+v, which writes %q and parses back to %+v, %v", v, s, s.String(), again, err)
		}
	})
}

func TestProxyEnv(t *testing.T) {
	got := ProxyEnv([]string{"PATH=/bin", "https_proxy=http://corp:8080", "NO_PROXY=localhost", "all_proxy=socks5://x", "KEYBOARD=x"}, "127.0.0.1:9")
	want := "PATH=/bin KEYBOARD=x HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy="
	if strings.Join(got, " ") != want {
		t.Errorf("ProxyEnv = %q, want %q", got, want)
	}
}
