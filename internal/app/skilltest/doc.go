// Package skilltest runs a skill's own tests the way a model reaches the
// skill: `agent skill test`. It reads the cases of tests/*.yaml, calls
// each through the workspace's one call path (Workspace.Call), checks the
// outcome against the case's expectations (success, error code, JSON
// paths of the result, files written in a scratch workspace) and reports
// the sandbox's denials against the case that caused them. Reports are
// written as JSON or JUnit XML for CI.
//
// The checks around the cases (validate --strict, the plugin's go test,
// the audit) are the front end's: they arrive here as Results to report.
//
// Floor: the application (docs/architecture.md). It may import the other
// rooms of internal/app, host, plugins/, registry, the mechanisms and the
// ground; only cmd/ imports it.
package skilltest
