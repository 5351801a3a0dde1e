package manifest

import (
	"slices"
	"strings"
	"testing"
)

func TestParsePermissionsFSNetwork(t *testing.T) {
	tests := []struct {
		name    string
		perms   string
		want    Permissions
		wantErr string
	}{
		{"none", "", Permissions{}, ""},
		{"fs and network", "permissions:\n  fs:\n    read: [~/data, /etc/hosts]\n    write: [$WORKSPACE/out, $TMP]\n  network: [api.example.com:443, \"*\"]\n",
			Permissions{FS: FSPermissions{Read: []string{"~/data", "/etc/hosts"}, Write: []string{"$WORKSPACE/out", "$TMP"}}, Network: []string{"api.example.com:443", "*"}}, ""},
		{"relative path", "permissions:\n  fs:\n    read: [data]\n", Permissions{}, "permissions.fs.read: \"data\" is not an absolute path"},
		{"network without port", "permissions:\n  network: [example.com]\n", Permissions{}, "permissions.network: \"example.com\" is not host:port"},
		{"port out of range", "permissions:\n  network: [\"example.com:70000\"]\n", Permissions{}, "no port between 1 and 65535"},
		{"fs not a mapping", "permissions:\n  fs: [a]\n", Permissions{}, "permissions.fs must be a mapping"},
		{"duplicate read never widens", "permissions:\n  fs:\n    read: [/a]\n    read: [/]\n", Permissions{}, "appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "---\nname: s\ndescription: d\n" + tt.perms + "---\nbody\n"
			m, _, err := ParseManifest("SKILL.md", []byte(src))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := m.Permissions
			if !slices.Equal(got.FS.Read, tt.want.FS.Read) || !slices.Equal(got.FS.Write, tt.want.FS.Write) || !slices.Equal(got.Network, tt.want.Network) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSplitHostPort(t *testing.T) {
	tests := []struct {
		in, host, port string
		ok             bool
	}{
		{"example.com:443", "example.com", "443", true},
		{"[::1]:8080", "::1", "8080", true},
		{"::1:8080", "", "", false},
		{"example.com", "", "", false},
		{"[::1:80", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			h, p, ok := splitHostPort(tt.in)
			if h != tt.host || p != tt.port || ok != tt.ok {
				t.Errorf("splitHostPort(%q) = %q, %q, %v", tt.in, h, p, ok)
			}
		})
	}
}
