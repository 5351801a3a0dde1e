package registry

import "syscall"

func mtimeNs(st *syscall.Stat_t) int64 { return st.Mtimespec.Nano() }
func ctimeNs(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
