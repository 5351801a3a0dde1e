//go:build linux && !portable

package base

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/isolation/sandbox"
)

// TestCommandSandbox: shell_command reads the system and the workspace
// and writes the workspace and its TMPDIR; a secret outside, a write
// outside and a TCP connection to a loopback port are refused.
func TestCommandSandbox(t *testing.T) {
	st := sandbox.Probe()
	if st.ABI == 0 || !st.NetNS {
		t.Skipf("sandbox incomplete here: %v", st.Lines())
	}
	w := newTestWS(t, map[string]string{"in.txt": "inside"})
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_ed25519")
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	tests := []struct {
		name, command string
		ok            bool
	}{
		{"read the workspace", "cat in.txt", true},
		{"write the workspace", "echo x > out.txt && cat out.txt", true},
		{"write its TMPDIR", `echo x > "$TMPDIR/f" && cat "$TMPDIR/f"`, true},
		{"read a secret outside", "cat " + secret, false},
		{"write outside", "echo x > " + filepath.Join(outside, "f"), false},
		{"tcp to loopback", "exec 3<>/dev/tcp/127.0.0.1/" + port, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res ExecResult
			msg, code := w.call("shell_command", map[string]any{"command": tc.command}, &res)
			if code != "" {
				t.Fatalf("%s: %s", code, msg)
			}
			if got := res.ExitCode == 0; got != tc.ok {
				t.Errorf("exit %d (%s), want success %v", res.ExitCode, strings.TrimSpace(res.Output), tc.ok)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error("a command wrote outside the workspace")
	}
}
