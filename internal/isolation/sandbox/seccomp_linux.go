//go:build linux && !portable

package sandbox

import seccomp "github.com/elastic/go-seccomp-bpf"

// The seccomp filter itself is in internal/sandbox/confine.

// seccompOn says whether Start installs the filter; a function field
// so that BenchmarkSeccomp can compare it off in the same run.
var seccompOn = func() bool { return Probe().Seccomp }

// seccompSupported says whether this kernel can filter syscalls.
func seccompSupported() bool { return seccomp.Supported() }
