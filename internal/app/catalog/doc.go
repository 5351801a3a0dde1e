// Package catalog finds skills before they are installed (SPEC §20): it
// collects them from the installed set, git sources, OCI registries and
// skills.sh-compatible search APIs, ranks them for a query, and keeps a
// team's index in an SQLite database (pure Go, FTS5) that a small HTTP
// server answers from: the skills.sh search API, a web page and the
// well-known discovery index.
package catalog
