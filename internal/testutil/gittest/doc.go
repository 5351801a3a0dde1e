// Package gittest builds real git repositories for tests and serves them.
//
// NewRepo makes a repository with go-git in a temp dir; Commit, Tag, Branch
// and Symlink change it. FileURL is a file:// URL for it, and Serve (or
// ServeRepo) puts a directory of repositories behind a loopback HTTP server
// that runs `git http-backend` through net/http/cgi, so that clones go over
// the smart HTTP protocol just like they do against a real forge. The git
// binary is used only by Serve, and only in tests.
package gittest
