//go:build !linux

package sdk

func useHandshakeStdout() {}
