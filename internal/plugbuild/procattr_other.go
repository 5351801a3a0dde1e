//go:build !linux

package plugbuild

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
