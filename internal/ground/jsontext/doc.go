// Package jsontext encodes JSON meant to be read: as encoding/json, but
// without HTML escapes, so `>=3.8` and `a < b` stay as written (go-sdk
// encodes MCP messages the same way).
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package jsontext
