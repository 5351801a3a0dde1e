//go:build !linux

package sdk

import "runtime/debug"

func trimMemory() { debug.FreeOSMemory() }
