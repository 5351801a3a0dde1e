//go:build !linux

package probe

import "errors"

func seize(int) error { return errors.New("ptrace: not tried on this system") }
