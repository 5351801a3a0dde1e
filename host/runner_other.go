//go:build !linux

package host

import "syscall"

// sysProcAttr: no Pdeathsig outside Linux; sdk.Serve's parent poll is the
// only guard there.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
