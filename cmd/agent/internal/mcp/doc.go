// Package mcp is the MCP front end of the workspace (SPEC §13): it serves
// the active skills' tools, their SKILL.md bodies as prompts and their
// files as resources to any MCP client, over stdio or loopback streamable
// HTTP, with github.com/modelcontextprotocol/go-sdk.
//
// A Server holds one workspace at a time. When registry.json changes (add,
// update, remove, trust, untrust) it loads a new workspace, swaps it in and
// go-sdk sends list_changed for tools, prompts and resources; the old
// workspace's plugins are stopped once its last call returns. Plugins stay
// warm between calls, calls run concurrently, a client's cancellation
// cancels the plugin call, and a plugin idle for IdleTimeout is stopped and
// started again on its next call.
//
// Nothing here writes to stdout but the protocol: logs go to the Logger.
//
// Floor: front ends (docs/architecture.md), beside the CLI under cmd/agent,
// and only cmd imports it. It reaches skills through internal/app/workspace
// and must not import host, registry or plugins/ itself.
package mcp
