// Package deps resolves the graph of skills that require skills (SPEC
// §21): one version per skill name, the highest that satisfies every
// constraint on it, before anything is written. It does no I/O of its own:
// a Finder, backed by the registry's fetchers, says which versions a
// requirement's source offers.
package deps
