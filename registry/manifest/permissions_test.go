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
		{"dot dot", "permissions:\n  fs:\n    write: [$WORKSPACE/../etc]\n", Permissions{}, `permissions.fs.write: "$WORKSPACE/../etc" holds ".."`},
		{"dot dot at the end", "permissions:\n  fs:\n    read: [~/data/..]\n", Permissions{}, `holds ".."`},
		{"dot dot in metadata", "metadata:\n  agent.permissions.fs.read: \"/srv/a/../../etc\"\n", Permissions{}, `agent.permissions.fs.read: "/srv/a/../../etc" holds ".."`},
		{"dots in a name", "permissions:\n  fs:\n    read: [/srv/a..b, /srv/.cache]\n", Permissions{FS: FSPermissions{Read: []string{"/srv/a..b", "/srv/.cache"}}}, ""},
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

// TestBroadPermissions: what reaches far beyond a skill's folder is a
// warning where SKILL.md is read (validate, add, link) and in Broad (the
// add prompt and trust); narrow permissions give none.
func TestBroadPermissions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, perms string
		want        []string
	}{
		{"narrow", "permissions:\n  env: [GH_TOKEN]\n  fs:\n    read: [~/data, /etc/hosts]\n    write: [$WORKSPACE/out]\n  network: [api.example.com:443]\n", nil},
		{"write root", "permissions:\n  fs:\n    write: [/]\n", []string{`permissions.fs.write: "/" lets this skill's code change every file`}},
		{"read root", "permissions:\n  fs:\n    read: [//]\n", []string{`permissions.fs.read: "//" lets this skill's code read every file`}},
		{"home", "permissions:\n  fs:\n    read: [\"~\"]\n    write: [~/]\n", []string{`permissions.fs.read: "~" is the whole home folder`, `permissions.fs.write: "~/" is the whole home folder: this skill's code may change`}},
		{"any host", "permissions:\n  network: [\"*\"]\n", []string{`permissions.network: "*" lets this skill's code reach any host`}},
		{"every variable", "permissions:\n  env: [\"*\"]\n", []string{`permissions.env: "*" passes every environment variable but known secrets`}},
		{"in metadata", "metadata:\n  agent.permissions.fs.write: \"/\"\n  agent.permissions.network: \"*\"\n", []string{`agent.permissions.fs.write: "/" lets`, `agent.permissions.network: "*" lets`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "---\nname: s\ndescription: d\n" + tc.perms + "---\nbody\n"
			m, warns, err := ParseManifest("SKILL.md", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range warns {
				got = append(got, w.String())
			}
			all := strings.Join(got, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("warnings lack %q:\n%s", w, all)
				}
			}
			if len(tc.want) == 0 && all != "" {
				t.Errorf("warnings for narrow permissions:\n%s", all)
			}
			broad := strings.Join(Broad(m.Permissions), "\n")
			if len(Broad(m.Permissions)) != len(tc.want) {
				t.Errorf("Broad = %q; want %d", broad, len(tc.want))
			}
			for _, w := range tc.want {
				// Broad names the top-level key for either form.
				w = strings.TrimPrefix(w, "agent.")
				if !strings.Contains(broad, w) {
					t.Errorf("Broad lacks %q:\n%s", w, broad)
				}
			}
		})
	}
}
