package registry

// SourceWellKnown marks an entry installed from an agent-skills discovery
// index (registry/wellknown): its GitURL is the index's address
// (https://HOST[/PATH]/.well-known/agent-skills/index.json), its Subdir
// the skill's name in the index, and its CommitSHA the skill's sha256:
// digest, which a lock records as its commit. An index serves one version
// of each skill: update installs a changed digest as a new version, sync
// and rollback find only the digest the site still serves.
const SourceWellKnown = "wellknown"
