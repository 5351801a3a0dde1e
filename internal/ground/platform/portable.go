//go:build portable

package platform

// Portable reports a build with the portable tag.
const Portable = true
