// Drives `agent mcp` with the reference skills client
// (@modelcontextprotocol/client ext/skills SkillsClient) over stdio and
// prints what it saw as JSON. SkillsClient checks every entry, and every
// file's size, digest and frontmatter against the entry, and throws when
// one differs; TestSkillsClient asserts on the report.
//
// usage: node check.mjs COMMAND [ARG...]   (the environment is in SERVER_ENV, JSON)
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const [command, ...args] = process.argv.slice(2);
const env = JSON.parse(process.env.SERVER_ENV ?? '{}');
const client = new Client({ name: 'agent-skills-check', version: '1' });
await client.connect(new StdioClientTransport({ command, args, env, stderr: 'inherit' }));
const skills = new SkillsClient(client);
const report = {
  protocol: client.getNegotiatedProtocolVersion?.() ?? null,
  supported: skills.supported,
  directoryRead: skills.directoryRead,
  skills: [],
};
const listing = await skills.list();
report.ttlMs = listing.ttlMs ?? null;
report.cacheScope = listing.cacheScope ?? null;
report.invalid = listing.invalid;
for (const entry of listing.skills) {
  const got = await skills.get(entry.uri);
  const skill = { uri: entry.uri, frontmatter: entry.frontmatter, getEqual: JSON.stringify(got.skill) === JSON.stringify(entry), files: {}, directories: {} };
  for (const r of entry.resources) {
    const file = await skills.read(entry, r.uri);
    skill.files[r.uri] = { size: file.bytes.length, verified: file.verified, mimeType: file.mimeType ?? null };
  }
  const main = await skills.read(entry);
  skill.body = main.body;
  // Walk every folder from the root down.
  const root = entry.uri.slice(0, -'/SKILL.md'.length);
  const queue = [root];
  while (queue.length > 0) {
    const dir = queue.shift();
    const { resources } = await skills.readDirectory(dir);
    skill.directories[dir] = resources.map((r) => ({ uri: r.uri, name: r.name, mimeType: r.mimeType }));
    for (const r of resources) if (r.mimeType === 'inode/directory') queue.push(r.uri);
  }
  report.skills.push(skill);
}
for (const uri of ['skill://no-such-skill/SKILL.md']) {
  try {
    await skills.get(uri);
    report.unknown = { uri, code: null };
  } catch (err) {
    report.unknown = { uri, code: err.code ?? null, message: String(err.message ?? err) };
  }
}
try {
  await skills.readDirectory(report.skills[0]?.uri ?? 'skill://none/SKILL.md');
  report.notDirectory = { code: null };
} catch (err) {
  report.notDirectory = { code: err.code ?? null, message: String(err.message ?? err) };
}
await client.close();
process.stdout.write(JSON.stringify(report));
