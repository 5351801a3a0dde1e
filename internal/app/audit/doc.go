// Package audit reads a skill's files for what the sandbox cannot stop
// (SPEC §12, issue 39): hidden text, instructions that reach for secrets or
// send them away, code that fetches and runs more code, obfuscation,
// hard-coded secrets, and URLs or paths its manifest does not declare.
//
// Rules are data: YAML files in the shape of Cisco's skill-scanner
// signatures (id, category, severity, patterns, exclude_patterns,
// file_types, description, remediation), built in under rules/ and
// extendable from $AGENT_HOME/audit/rules/ and the configuration. A rule
// either matches regular expressions or names a built-in check (check:)
// for what a pattern cannot say, such as a confusable heading or a host
// the manifest does not list. Every rule carries examples that must match
// and must not; the loader refuses a rule whose examples fail.
//
// Auditing reads only: no network, no process, nothing written.
package audit
