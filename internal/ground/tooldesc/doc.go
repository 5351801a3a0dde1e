// Package tooldesc is a tool's description as its plugin gave it, in the
// form registry.json caches, so that listing tools (with their titles,
// annotations and output schemas) starts no process.
//
// It is a leaf (SPEC §2): registry holds the type as registry.Tool without
// knowing the SDK, and both the workspace and internal/app/install translate
// it to and from sdk.ToolInfo here, so that neither imports the other.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package tooldesc
