package semconv

import "go.opentelemetry.io/otel/attribute"

// Scope is the instrumentation scope of the spans agent makes.
const Scope = "github.com/agentskills/agent"

// GenAI (gen-ai-spans.md, gen-ai-agent-spans.md).
const (
	GenAIOperationName         = attribute.Key("gen_ai.operation.name")
	GenAIToolName              = attribute.Key("gen_ai.tool.name")
	GenAIToolCallID            = attribute.Key("gen_ai.tool.call.id")
	GenAIToolType              = attribute.Key("gen_ai.tool.type")
	GenAIProviderName          = attribute.Key("gen_ai.provider.name")
	GenAIRequestModel          = attribute.Key("gen_ai.request.model")
	GenAIResponseModel         = attribute.Key("gen_ai.response.model")
	GenAIUsageInput            = attribute.Key("gen_ai.usage.input_tokens")
	GenAIUsageOutput           = attribute.Key("gen_ai.usage.output_tokens")
	GenAIAgentName             = attribute.Key("gen_ai.agent.name")
	GenAIAgentID               = attribute.Key("gen_ai.agent.id")
	GenAIResponseFinishReasons = attribute.Key("gen_ai.response.finish_reasons")
	GenAIConversationID        = attribute.Key("gen_ai.conversation.id")
	GenAIPromptName            = attribute.Key("gen_ai.prompt.name")
	// GenAISkillName is the skill a tool belongs to. Proposed in
	// semantic-conventions-genai PR #498, not yet merged: if it lands
	// under another name, this is the one place to change.
	GenAISkillName = attribute.Key("gen_ai.skill.name")
)

// Values of gen_ai.operation.name.
const (
	OpExecuteTool = "execute_tool"
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
)

// MCP (mcp.md) and JSON-RPC.
const (
	MCPMethodName      = attribute.Key("mcp.method.name")
	MCPProtocolVersion = attribute.Key("mcp.protocol.version")
	MCPSessionID       = attribute.Key("mcp.session.id")
	MCPResourceURI     = attribute.Key("mcp.resource.uri")
	JSONRPCRequestID   = attribute.Key("jsonrpc.request.id")
	// RPCResponseStatusCode is a JSON-RPC error's code.
	RPCResponseStatusCode = attribute.Key("rpc.response.status_code")
	// NetworkTransport is "pipe" for stdio, "tcp" for streamable HTTP.
	NetworkTransport = attribute.Key("network.transport")
)

// Values of error.type on an MCP server span: a tools/call answered with
// isError true (mcp.md), and an error without a JSON-RPC code.
const (
	ErrorToolError = "tool_error"
	ErrorOther     = "_OTHER"
)

// General keys this project uses from the stable conventions, spelled here
// so that one import serves.
const (
	ErrorType       = attribute.Key("error.type")
	ProcessExitCode = attribute.Key("process.exit.code")
	// The source a skill is fetched from (vcs registry): its URL, the
	// ref asked for, the commit (or OCI digest) fetched.
	VCSRepositoryURL   = attribute.Key("vcs.repository.url.full")
	VCSRefHeadName     = attribute.Key("vcs.ref.head.name")
	VCSRefHeadRevision = attribute.Key("vcs.ref.head.revision")
	// AgentCommand is the CLI command path of a command span ("agent skill
	// add"). AgentPluginStart, on execute_tool, says whether the call
	// started its plugin ("cold") or found it running ("warm");
	// AgentPluginLaunch, on a plugin launch, how the binary ran:
	// "exec_stop" (the installed file, checked while stopped at exec),
	// "sealed_copy", or "path" (no recorded hash).
	AgentCommand      = attribute.Key("agent.command")
	AgentPluginStart  = attribute.Key("agent.plugin.start")
	AgentPluginLaunch = attribute.Key("agent.plugin.launch")
	// AgentFetchPath, on a fetch span, is how a git source's objects
	// came: "filter" (trees, then the skills' blobs by id), "depth"
	// (one commit whole), "full", "cache" or "local".
	AgentFetchPath = attribute.Key("agent.fetch.path")
)
