// Package gitsrc is where skills come from: it parses add sources
// (source.go), resolves refs and fetches one commit through go-git (git.go,
// fetch.go), reads that commit as an io/fs.FS (treefs.go) and finds the
// skills inside a repository (discover.go). It never runs the git binary.
package gitsrc
