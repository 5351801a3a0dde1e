// Command agent is the skill host. All of its logic lives in internal/cli so
// that end-to-end tests can run it in process.
package main

import (
	"os"

	"github.com/agentskills/agent/cmd/agent/internal/cli"
)

func main() { os.Exit(cli.Main()) }
