package install

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/build/plugbuild"
)

// TestWindowsProgram: what plugin.command may name on Windows, where no
// file has an execute bit, decided by its first bytes.
func TestWindowsProgram(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		head string
		want string // "" accepted, else a part of the error
	}{
		{name: "PE image", head: "MZ\x90\x00"},
		{name: "#! script", head: "#!/bin/sh\necho hi\n", want: "is a script (it starts with #!), which Windows cannot run"},
		{name: "#! with env", head: "#!/usr/bin/env python3\n", want: "plugin.build"},
		{name: "ELF binary", head: "\x7fELF\x02\x01", want: "is not a Windows program"},
		{name: "empty file", head: "", want: "is not a Windows program"},
		{name: "one byte", head: "M", want: "is not a Windows program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := windowsProgram("bin/tool", []byte(tt.head))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, plugbuild.ErrBadPath) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), `"bin/tool"`) {
				t.Fatalf("err = %v; want ErrBadPath naming bin/tool and saying %q", err, tt.want)
			}
		})
	}
}
