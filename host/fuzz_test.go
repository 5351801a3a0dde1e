package host

import (
	"strings"
	"testing"
)

func TestFindHandshake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line, want string
		ok               bool
	}{
		{name: "plain", line: "1|1|unix|/tmp/plugin-dir1/plugin2|grpc|", want: "1|1|unix|/tmp/plugin-dir1/plugin2|grpc|", ok: true},
		{name: "with cert part", line: "1|1|unix|/s|grpc|MIIBcert", want: "1|1|unix|/s|grpc|MIIBcert", ok: true},
		{name: "after partial print", line: "partial 12" + "1|1|unix|/s|grpc|", want: "1|1|unix|/s|grpc|", ok: true},
		{name: "noise with pipes", line: "a | b | c", ok: false},
		{name: "empty", line: "", ok: false},
		{name: "wrong protocol word", line: "1|1|unix|/s|http|", ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := findHandshake(tc.line)
			if ok != tc.ok || got != tc.want {
				t.Errorf("findHandshake(%q) = %q %v, want %q %v", tc.line, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func FuzzFindHandshake(f *testing.F) {
	for _, s := range []string{"1|1|unix|/tmp/x|grpc|", "noise 1|1|tcp|127.0.0.1:1|grpc|", "1|1|unix||grpc|", "|||||"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		hs, ok := findHandshake(line)
		if !ok {
			return
		}
		if !strings.HasSuffix(line, hs) || !strings.HasPrefix(hs, "1|") || len(strings.Split(hs, "|")) < 5 {
			t.Fatalf("findHandshake(%q) = %q", line, hs)
		}
	})
}

func FuzzParseFingerprint(f *testing.F) {
	f.Add([]byte(`{"path":"/p","sha256":"` + strings.Repeat("ab", 32) + `","size":1,"dev":2,"ino":3,"mtime_ns":4,"ctime_ns":5}`))
	f.Add([]byte(`{"path":"","sha256":"zz"}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fp, err := parseFingerprint(b)
		if err != nil {
			return
		}
		if fp.Path == "" || len(fp.SHA256) != 64 {
			t.Fatalf("accepted incomplete record %+v", fp)
		}
	})
}
