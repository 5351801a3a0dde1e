//go:build race

package mcp_test

// Under -race the agent binary the tests drive is built with it too.
func init() { buildFlags = append(buildFlags, "-race") }
