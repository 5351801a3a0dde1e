package mcp

import (
	"context"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/internal/disclosure"
)

// PromptArgument is the one argument every skill prompt takes: the text
// that fills $ARGUMENTS.
const PromptArgument = "arguments"

type serverPrompt struct {
	prompt  *sdkmcp.Prompt
	handler sdkmcp.PromptHandler
}

// promptSet is every user-invocable active skill as a prompt (the slash
// command of a client), whose body is Layer 2 with $ARGUMENTS filled in.
func (s *Server) promptSet(ws *workspace.Workspace) map[string]serverPrompt {
	out := map[string]serverPrompt{}
	for _, as := range ws.Active {
		m := as.Manifest
		if disclosure.Check(as.Entry.Canonical, workspace.Triggers(m), disclosure.Person) != nil {
			continue
		}
		hint := m.ArgumentHint
		if hint == "" {
			hint = "text substituted for $ARGUMENTS in the skill's instructions"
		}
		name := as.Entry.Canonical
		out[name] = serverPrompt{
			prompt: &sdkmcp.Prompt{
				Name:        name,
				Description: m.Description,
				Arguments:   []*sdkmcp.PromptArgument{{Name: PromptArgument, Description: hint}},
			},
			handler: s.promptHandler(name),
		}
	}
	return out
}

func (s *Server) promptHandler(name string) sdkmcp.PromptHandler {
	return func(ctx context.Context, req *sdkmcp.GetPromptRequest) (*sdkmcp.GetPromptResult, error) {
		gen, err := s.acquire()
		if err != nil {
			return nil, err
		}
		defer gen.calls.Done()
		as := gen.ws.Skill(name)
		if as == nil {
			return nil, workspaceGone(name)
		}
		var args []string
		if req.Params != nil {
			args = strings.Fields(req.Params.Arguments[PromptArgument])
		}
		r, err := gen.ws.Instructions(name, args)
		if err != nil {
			return nil, err
		}
		return &sdkmcp.GetPromptResult{
			Description: as.Manifest.Description,
			Messages: []*sdkmcp.PromptMessage{{
				Role:    "user",
				Content: &sdkmcp.TextContent{Text: r.Instructions},
			}},
		}, nil
	}
}
