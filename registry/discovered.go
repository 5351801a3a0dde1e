package registry

// SourceDiscovered is the Source of a skill found in a project's or the
// user's .agents/skills folder (SPEC §6). Such entries are never written
// to registry.json: they are found again by every command, and trusting
// one records its folder and the hash of its files (registry/trust).
const SourceDiscovered = "discovered"
