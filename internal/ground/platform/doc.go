// Package platform says which kind of build this agent is: whether the
// portable tag selected the fallbacks that macOS and Windows use (so
// that Linux CI exercises them), which plugin builds must then share.
package platform
