// Package ocitest runs a real OCI registry for tests: Debian's
// docker-registry (distribution 2.8), started by the test with its own
// configuration on a free 127.0.0.1 port and its own storage folder, so
// that a test can also change a stored blob on disk. A test that calls
// Start skips, saying why, where docker-registry is not installed
// (.ci/run installs it with apt-get).
package ocitest
