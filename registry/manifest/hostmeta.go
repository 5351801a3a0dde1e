package manifest

import (
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// SpecFields are the six top-level fields of the Agent Skills
// specification; its reference validator (npm skills-ref) rejects any
// other (SPEC §3).
var SpecFields = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// hostKey is one of this host's fields in the spec's form: a flat,
// namespaced string key under metadata, and the top-level key it stands
// for.
type hostKey struct {
	meta string // "agent.plugin.build"
	top  string // "plugin": the top-level key whose presence makes it given twice
}

// hostKeys are the metadata forms of this host's fields (SPEC §3). List
// values are space-separated.
var hostKeys = []hostKey{
	{meta: "agent.version", top: "version"},
	{meta: "agent.plugin.build", top: "plugin"},
	{meta: "agent.plugin.command", top: "plugin"},
	{meta: "agent.scripts", top: "scripts"},
	{meta: "agent.scripts.ignore", top: "scripts_ignore"},
	{meta: "agent.permissions.env", top: "permissions.env"},
	{meta: "agent.permissions.fs.read", top: "permissions.fs.read"},
	{meta: "agent.permissions.fs.write", top: "permissions.fs.write"},
	{meta: "agent.permissions.network", top: "permissions.network"},
	{meta: "agent.min-version", top: "min_agent_version"},
	{meta: "agent.max-version", top: "max_agent_version"},
	{meta: "agent.version-constraint", top: "agent_version"},
	{meta: "agent.cgo", top: "cgo"},
	{meta: "agent.requires", top: "requires"},
}

// MetadataKeys returns the metadata forms of a top-level field of this
// host ("plugin" gives agent.plugin.build and agent.plugin.command), none
// for a field that has no such form.
func MetadataKeys(top string) []string {
	var out []string
	for _, k := range hostKeys {
		if k.top == top || strings.HasPrefix(k.top, top+".") {
			out = append(out, k.meta)
		}
	}
	return out
}

// hostValue is one agent.* key found under metadata.
type hostValue struct {
	key  hostKey
	val  string
	line int
}

// hostMetadata reads the agent.* keys of the metadata mapping v. Values
// are strings; a number or a list is read as written, with the warning
// that validate --strict turns into an error.
func (p *parser) hostMetadata(v *yaml.Node) []hostValue {
	var out []hostValue
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || !strings.HasPrefix(k.Value, "agent.") {
			continue
		}
		i := slices.IndexFunc(hostKeys, func(h hostKey) bool { return h.meta == k.Value })
		if i < 0 {
			p.warnf(p.line(k), "metadata key %q is not one this host reads; check the spelling (known: %s)", k.Value, strings.Join(knownHostKeys(), ", "))
			continue
		}
		h := hostKeys[i]
		out = append(out, hostValue{key: h, val: p.str("metadata."+h.meta, val), line: p.line(k)})
	}
	return out
}

func knownHostKeys() []string {
	var out []string
	for _, k := range hostKeys {
		out = append(out, k.meta)
	}
	sort.Strings(out)
	return out
}

// applyHostMetadata sets the fields given as agent.* metadata keys. One
// field given both ways is an error: neither form silently wins.
func (p *parser) applyHostMetadata(m *Manifest, vals []hostValue) {
	var plugin *PluginSpec
	pluginLine := 0
	for _, hv := range vals {
		topLine, twice := m.KeyLines[hv.key.top]
		if strings.HasPrefix(hv.key.top, "permissions.") {
			topLine, twice = p.topPerm[hv.key.top]
		}
		if twice {
			p.errorf(hv.line, "%s is given twice: top-level '%s' (line %d) and metadata '%s'; keep the metadata form and delete the other", hv.key.top, hv.key.top, topLine, hv.key.meta)
			continue
		}
		list := strings.Fields(hv.val)
		switch hv.key.meta {
		case "agent.version":
			m.Version = hv.val
			p.keyLines["version"] = hv.line
		case "agent.plugin.build", "agent.plugin.command":
			if plugin == nil {
				plugin = &PluginSpec{}
			}
			if hv.key.meta == "agent.plugin.build" {
				plugin.Build = hv.val
			} else {
				plugin.Command = hv.val
			}
			pluginLine = hv.line
		case "agent.scripts":
			m.Scripts = list
			p.checkScripts(hv.key.meta, hv.line, list)
		case "agent.scripts.ignore":
			m.ScriptsIgnore = list
			p.checkIgnore(hv.key.meta, hv.line, list)
		case "agent.permissions.env":
			m.Permissions.Env = list
			p.checkEnv(hv.key.meta, hv.line, list)
		case "agent.permissions.fs.read", "agent.permissions.fs.write":
			p.checkFS(hv.key.meta, hv.line, list)
			if hv.key.meta == "agent.permissions.fs.read" {
				m.Permissions.FS.Read = list
			} else {
				m.Permissions.FS.Write = list
			}
		case "agent.permissions.network":
			m.Permissions.Network = list
			p.checkNetwork(hv.key.meta, hv.line, list)
		case "agent.min-version":
			m.MinAgentVersion = hv.val
			p.keyLines["min_agent_version"] = hv.line
		case "agent.max-version":
			m.MaxAgentVersion = hv.val
			p.keyLines["max_agent_version"] = hv.line
		case "agent.version-constraint":
			m.AgentVersion = hv.val
			p.keyLines["agent_version"] = hv.line
		case "agent.requires":
			if _, err := ParseRequires(hv.val); err != nil {
				p.errorf(hv.line, "%v", err)
			}
		case "agent.cgo":
			switch hv.val {
			case "true", "false":
				m.CGO = hv.val == "true"
			default:
				p.errorf(hv.line, "%s: %q is not true or false", hv.key.meta, hv.val)
			}
		}
	}
	if plugin != nil {
		p.checkPlugin(pluginLine, plugin, "metadata sets both agent.plugin.build and agent.plugin.command; keep one")
		m.Plugin = plugin
	}
}

// noteTopPerm records the line of a top-level permissions list, so that
// the same list under metadata is an error.
func (p *parser) noteTopPerm(key string, line int) {
	if p.topPerm == nil {
		p.topPerm = map[string]int{}
	}
	p.topPerm[key] = line
}
