package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/sdk"
)

type serverTool struct {
	tool    *sdkmcp.Tool
	handler sdkmcp.ToolHandler
}

// callToolInfo describes call_tool, the one tool --lazy lists for every
// skill tool.
var callToolSchema = json.RawMessage(`{"type":"object","properties":{"tool":{"type":"string","description":"the tool's name, as use_skill listed it"},"arguments":{"type":"object","description":"the tool's arguments, matching the input_schema use_skill gave"}},"required":["tool"]}`)

// toolSet is what tools/list shows for ws. Full mode lists every tool of
// the index under its exposed name; --lazy lists use_skill (which then
// returns the skill's tool schemas), call_tool and the script tools.
func (s *Server) toolSet(ws *workspace.Workspace) map[string]serverTool {
	out := map[string]serverTool{}
	for _, t := range ws.Tools {
		if s.opts.Lazy && t.Skill != workspace.BuiltinSkill && t.Skill != workspace.ExecSkill {
			continue
		}
		name := t.Exposed()
		if _, taken := out[name]; taken {
			continue
		}
		info := t.Info
		if s.opts.Lazy && t.Name == workspace.UseSkillTool {
			info.Description = lazyUseSkillDescription(ws)
		}
		out[name] = serverTool{
			tool:    mcpTool(name, info),
			handler: s.toolHandler(name),
		}
	}
	if s.opts.Lazy && len(ws.Tools) > 0 {
		out[CallTool] = serverTool{
			tool: &sdkmcp.Tool{
				Name:        CallTool,
				Description: "Call a tool of an active skill by name with its arguments. use_skill lists a skill's tools and their input schemas first.",
				InputSchema: callToolSchema,
			},
			handler: s.callToolHandler,
		}
	}
	return out
}

// lazyUseSkillDescription carries Layer 1, so that a --lazy client knows
// which skills exist without any of their schemas.
func lazyUseSkillDescription(ws *workspace.Workspace) string {
	return "Load a skill's instructions (its SKILL.md body) and the input schemas of its tools, which you then call with call_tool. Call this when a task matches a skill.\n\n" + instructions(ws)
}

// objectSchema is the tool's input schema; MCP requires an object schema,
// so anything else (or nothing) becomes one that takes any object.
func objectSchema(raw json.RawMessage) json.RawMessage {
	var head struct {
		Type any `json:"type"`
	}
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &head) != nil || head.Type != "object" {
		return json.RawMessage(`{"type":"object"}`)
	}
	return raw
}

// toolHandler calls the tool exposed as name in whichever workspace is
// current when the call arrives.
func (s *Server) toolHandler(name string) sdkmcp.ToolHandler {
	return func(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
		return s.call(ctx, req, name, req.Params.Arguments)
	}
}

// callToolHandler is --lazy's call_tool {tool, arguments}.
func (s *Server) callToolHandler(ctx context.Context, req *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
	var in struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(orEmpty(req.Params.Arguments), &in); err != nil || in.Tool == "" {
		return errorResult(sdk.CodeInvalidArgs, `call_tool takes {"tool": "<name>", "arguments": {...}}; use_skill lists a skill's tools`), nil
	}
	return s.call(ctx, req, in.Tool, in.Arguments)
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

// call runs name in the current workspace through its call path.
func (s *Server) call(ctx context.Context, req *sdkmcp.CallToolRequest, name string, args json.RawMessage) (*sdkmcp.CallToolResult, error) {
	gen, err := s.acquire()
	if err != nil {
		return errorResult(workspace.CodeHostError, err.Error()), nil
	}
	defer gen.calls.Done()
	ws := gen.ws
	ctx, cancel := s.callContext(ctx, req.Session)
	defer cancel()
	stop := s.progress(ctx, req, name)
	out := ws.Call(ctx, name, args, workspace.CallOptions{Timeout: s.opts.CallTimeout})
	stop()
	if !out.OK() {
		return errorResult(out.Code, out.Message), nil
	}
	useSkill := out.Tool.Name == workspace.UseSkillTool && out.Tool.Skill == workspace.BuiltinSkill
	if s.opts.Lazy && useSkill {
		out.Value = withToolSchemas(ws, out.Value)
	}
	res := toolResult(out)
	if useSkill {
		withResourceLinks(gen, out.Value, res)
	}
	return res, nil
}

// lazyTool is how use_skill lists a skill's tools under --lazy.
type lazyTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// withToolSchemas adds the skill's tools to a use_skill result, so that a
// --lazy client learns their schemas only when it uses the skill.
func withToolSchemas(ws *workspace.Workspace, value json.RawMessage) json.RawMessage {
	var r map[string]json.RawMessage
	if json.Unmarshal(value, &r) != nil {
		return value
	}
	var skill string
	if json.Unmarshal(r["skill"], &skill) != nil {
		return value
	}
	tools := []lazyTool{}
	for _, t := range ws.Tools {
		if t.Skill == skill {
			tools = append(tools, lazyTool{Name: t.Exposed(), Description: t.Info.Description, InputSchema: objectSchema(t.Info.InputSchema)})
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return value
	}
	r["tools"] = b
	if out, err := json.Marshal(r); err == nil {
		return out
	}
	return value
}

// toolResult carries the result's JSON as structuredContent and as text
// (SPEC §13). structuredContent must be an object, so another value is
// wrapped as {"result": value}. A tool's message follows as a second text.
// A value of exactly {"mime_type", "data"} is bytes: see binaryContent.
func toolResult(res workspace.Outcome) *sdkmcp.CallToolResult {
	value := bytes.TrimSpace(res.Value)
	if len(value) == 0 {
		value = []byte("null")
	}
	out := &sdkmcp.CallToolResult{}
	if c, meta, ok := binaryContent(res.Tool, value); ok {
		out.Content = []sdkmcp.Content{c}
		out.StructuredContent = meta
	} else {
		out.Content = []sdkmcp.Content{&sdkmcp.TextContent{Text: string(value)}}
		if value[0] == '{' {
			out.StructuredContent = json.RawMessage(value)
		} else {
			out.StructuredContent = json.RawMessage(fmt.Appendf(nil, `{"result":%s}`, value))
		}
	}
	if res.Message != "" {
		out.Content = append(out.Content, &sdkmcp.TextContent{Text: res.Message})
	}
	return out
}
