package main

import (
	"context"

	"github.com/agentskills/agent/internal/testutil/probe"
	"github.com/agentskills/agent/sdk"
)

type probeIn struct {
	Op  string `json:"op" description:"one of probe.Ops"`
	Arg string `json:"arg,omitempty" description:"the path or address"`
}

// probeTool tries one access that a sandbox may deny and says "allowed"
// or the error: for the host's sandbox trials.
func probeTool() sdk.Tool {
	return sdk.NewTool("probe", "Try a file or network access ("+probe.Ops+") and say whether it worked.", func(_ context.Context, in probeIn) (string, error) {
		if err := probe.Try(in.Op, in.Arg); err != nil {
			return "denied: " + err.Error(), nil
		}
		return "allowed", nil
	})
}
