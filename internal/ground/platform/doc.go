// Package platform says which kind of build this agent is: whether the
// portable tag selected the fallbacks that macOS and Windows use (so
// that Linux CI exercises them), which plugin builds must then share.
//
// Floor: the ground (docs/architecture.md). A leaf: it imports nothing of
// the project but other ground packages and sdk, so any floor may import it;
// it must not import anything above the ground.
package platform
