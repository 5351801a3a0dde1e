package base

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestErrorCodes triggers each error code of SPEC §14 and checks that its
// message says what to do next.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	w := newTestWS(t, map[string]string{"a.txt": "x\nx\n", "bin": "\x00\x01"})
	big := filepath.Join(w.dir, "big.txt")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxEditBytes+1); err != nil {
		t.Fatal(err)
	}
	advice := regexp.MustCompile(`(?i)\b(use|give|set|read|add|raise|check|pass|shrink|call|list|work|escape|merge|finish|narrow)\b`)
	tests := []struct {
		code string
		tool string
		args map[string]any
	}{
		{CodePathOutside, "read_file", map[string]any{"path": "../a.txt"}},
		{CodePathOutside, "write_file", map[string]any{"path": filepath.Join(w.home, "x"), "content": ""}},
		{CodeNotFound, "read_file", map[string]any{"path": "missing.txt"}},
		{CodeNotFound, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch"}},
		{CodeNotText, "read_file", map[string]any{"path": "bin"}},
		{CodeNoMatch, "edit_file", map[string]any{"path": "a.txt", "old_text": "y", "new_text": "z"}},
		{CodeNoMatch, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-y\n+z\n*** End Patch"}},
		{CodeAmbiguous, "edit_file", map[string]any{"path": "a.txt", "old_text": "x", "new_text": "z"}},
		{CodeTooLarge, "edit_file", map[string]any{"path": "big.txt", "old_text": "x", "new_text": "z"}},
		{CodeTimeout, "exec", map[string]any{"command": "sleep", "args": []string{"10"}, "timeout_ms": 100}},
		{CodeExecutionFailed, "exec", map[string]any{"command": "definitely-not-a-command"}},
		{CodeInvalidArgs, "grep_files", map[string]any{"pattern": "("}},
	}
	for _, tt := range tests {
		t.Run(tt.code+"/"+tt.tool, func(t *testing.T) {
			t.Parallel()
			msg, code := w.call(tt.tool, tt.args, nil)
			if code != tt.code {
				t.Fatalf("code %q (%s), want %q", code, msg, tt.code)
			}
			if !advice.MatchString(msg) {
				t.Errorf("message %q does not say what to do", msg)
			}
		})
	}
}
