package base

import (
	"fmt"
	"os"
)

// Main is the whole of `agent __plugin base`: it reads Config from
// ConfigEnv and serves the skill until the host closes it. It returns 1
// when the configuration is missing or malformed, or the host is already
// gone.
func Main() int {
	cfg, err := configFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "base plugin: %v\n", err)
		return 1
	}
	return running.Serve(New(cfg))
}
