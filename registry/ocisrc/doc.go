// Package ocisrc keeps agent skills in OCI registries (SPEC §18): one
// skill is one OCI artifact, pushed and pulled with oras-go.
//
// The artifact is an OCI image manifest (image-spec v1.1) with
//
//   - artifactType application/vnd.agentskills.skill.v1;
//   - a config blob of type application/vnd.agentskills.skill.config.v1+json
//     holding the skill's name, version, description, its h1: hash and,
//     for a mirror, the git source, folder and commit it was taken from;
//   - one layer per file of the skill folder (the files the h1: hash
//     covers, in its order), of type application/vnd.agentskills.skill.file.v1,
//     its slash path in the annotation org.opencontainers.image.title.
//
// One layer per file means a layer's digest is the file's sha256, so the
// h1: hash of an artifact follows from its manifest alone, and a file
// that did not change between versions is not uploaded again.
//
// OCI tags cannot hold '+', so the tag of a version with semver build
// metadata writes it with '_' (1.2.0+build.5 is tagged 1.2.0_build.5), as
// Helm does; reading tags maps '_' back to '+'.
//
// Pull checks every blob itself: the manifest, the config and each file
// are hashed as they arrive, and a mismatch names both the expected and
// the actual sha256 (oras-go alone says only "mismatched digest").
// Credentials come from the Docker configuration (credentials.NewStoreFromDocker);
// plain HTTP is used only for a loopback registry.
package ocisrc
