package trust

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentskills/agent/registry"
)

// TestStateFileCorrupt: a damaged signers.json or trusted-folders.json is
// registry.ErrCorrupt naming the file and what to do, and is left as it was.
func TestStateFileCorrupt(t *testing.T) {
	tests := []struct {
		name   string
		path   func(Records) string
		read   func(Records) error
		advice string
	}{
		{"signers", Records.SignersPath, func(s Records) error { _, err := s.Signers(); return err }, "agent skill trust --signer"},
		{"trusted folders", Records.TrustedFoldersPath, func(s Records) error { _, err := s.TrustedFolders(); return err }, "fix or delete it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Of(registry.NewStore(t.TempDir()))
			if err := tt.read(s); err != nil {
				t.Fatalf("no file: %v, want none", err)
			}
			if err := os.MkdirAll(s.Home, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(tt.path(s), []byte(`{"x": [`), 0o644); err != nil {
				t.Fatal(err)
			}
			err := tt.read(s)
			if !errors.Is(err, registry.ErrCorrupt) || !strings.Contains(err.Error(), tt.path(s)) || !strings.Contains(err.Error(), tt.advice) {
				t.Fatalf("damaged file: %v, want registry.ErrCorrupt naming %s with %q", err, tt.path(s), tt.advice)
			}
			if b, _ := os.ReadFile(tt.path(s)); string(b) != `{"x": [` {
				t.Fatalf("the damaged file changed: %q", b)
			}
		})
	}
}
