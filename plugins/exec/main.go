package exec

import (
	"encoding/json"
	"fmt"
	"os"
)

// Main is the whole of `agent __plugin exec`: it reads Config from
// ConfigEnv and serves the skill to the host until the host closes it. It
// returns 1 when the configuration is missing or malformed, or the host is
// already gone.
func Main() int {
	cfg, err := configFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec plugin: %v\n", err)
		return 1
	}
	return running.Serve(New(cfg))
}

func configFromEnv() (Config, error) {
	var cfg Config
	raw, ok := os.LookupEnv(ConfigEnv)
	if !ok {
		return cfg, fmt.Errorf("%s is not set; this command is started by agent, not by hand", ConfigEnv)
	}
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return cfg, fmt.Errorf("%s is not valid JSON: %v", ConfigEnv, err)
	}
	return cfg, nil
}
