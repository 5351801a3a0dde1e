package exec

import (
	"context"
	"encoding/json"

	"github.com/agentskills/agent/sdk"
)

// Tool descriptions: what a model reads in Layer 1, so they stay short.
const (
	descList = "List the runnable scripts of the active skills (or of one skill)."
	descHelp = "Show a skill script's --help text and usage line. Call it before script_run when unsure of the arguments."
	descRun  = "Run a skill script with arguments. With json=true (the default) --json is appended and stdout is returned parsed as JSON; json=false returns the text."
)

// New builds the exec skill for cfg: the tools script_list, script_help and
// script_run. Zero Config fields take the SPEC defaults.
func New(cfg Config) sdk.Skill {
	return newSkill(newService(cfg))
}

func newSkill(s *service) sdk.Skill {
	return sdk.NewSkill(
		sdk.NewTool("script_list", descList, func(ctx context.Context, in ListInput) (map[string][]ListEntry, error) {
			v, msg, err := s.list(ctx, in)
			return v, noted(ctx, msg, err)
		}),
		sdk.NewTool("script_help", descHelp, func(ctx context.Context, in HelpInput) (HelpResult, error) {
			v, msg, err := s.scriptHelp(ctx, in)
			return v, noted(ctx, msg, err)
		}),
		sdk.NewTool("script_run", descRun, func(ctx context.Context, in RunInput) (json.RawMessage, error) {
			v, msg, err := s.runScript(ctx, in)
			return v, noted(ctx, msg, err)
		}),
	)
}

func noted(ctx context.Context, msg string, err error) error {
	if err == nil {
		sdk.Note(ctx, msg)
	}
	return err
}
