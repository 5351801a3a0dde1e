package placement

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/agentskills/agent/registry/manifest"
)

// Agent is one row of the agent table (agents.json): the skill folders an
// agent reads in a project and for the user.
type Agent struct {
	Name    string   `json:"name"`
	Display string   `json:"display"`
	Project []string `json:"project"`
	User    []string `json:"user"`
	// ProjectAlso and UserAlso are folders the agent reads too, for
	// compatibility with other agents. A copy there does not stand in for
	// a copy in the agent's own folders (Plan), but discovery and the
	// listing know them.
	ProjectAlso []string `json:"project_also,omitempty"`
	UserAlso    []string `json:"user_also,omitempty"`
	// Detect lists paths ("~/" for the home folder, otherwise relative to
	// the project) whose existence means the agent is used here.
	Detect []string `json:"detect"`
	// MCP is the `agent mcp config` client that registers the MCP server
	// in this agent, when it has one.
	MCP string `json:"mcp,omitempty"`
	// Unverified marks folders taken from the pinned npx skills alone,
	// not yet checked against the agent's own documentation.
	Unverified bool `json:"unverified,omitempty"`
}

// Folders are the folders the agent reads at one level: user folders when
// global is set, project folders otherwise. The first is where a skill is
// placed.
func (a Agent) Folders(global bool) []string {
	if global {
		return a.User
	}
	return a.Project
}

// AlsoReads are the folders the agent reads for compatibility at one
// level.
func (a Agent) AlsoReads(global bool) []string {
	if global {
		return a.UserAlso
	}
	return a.ProjectAlso
}

// Reads reports whether folder at that level is one of the agent's own,
// so that a copy there serves it.
func (a Agent) Reads(folder string, global bool) bool {
	for _, f := range a.Folders(global) {
		if f == folder {
			return true
		}
	}
	return false
}

//go:embed agents.json
var agentsJSON []byte

// table parses agents.json on first use: every command links this
// package, few use it, and parsing at init cost each start 0.3 ms.
var table = sync.OnceValue(func() []Agent { return mustTable(agentsJSON) })

func mustTable(data []byte) []Agent {
	var t struct {
		Agents []Agent `json:"agents"`
	}
	if err := json.Unmarshal(data, &t); err != nil {
		panic("placement: agents.json: " + err.Error())
	}
	return t.Agents
}

// Agents is the agent table, in its file's order.
func Agents() []Agent { return append([]Agent(nil), table()...) }

// Env says where folders resolve: Home for "~/", Project for the rest.
type Env struct {
	Home    string
	Project string
}

// Resolve turns a table folder into an absolute path.
func (e Env) Resolve(folder string) string {
	if rest, ok := strings.CutPrefix(folder, "~/"); ok {
		return filepath.Join(e.Home, filepath.FromSlash(rest))
	}
	return filepath.Join(e.Project, filepath.FromSlash(folder))
}

// Detected reports whether any of the agent's detect paths exists.
func (e Env) Detected(a Agent) bool {
	for _, p := range a.Detect {
		if _, err := os.Stat(e.Resolve(p)); err == nil {
			return true
		}
	}
	return false
}

// Lookup returns the agents a --agent value names: a comma-separated list
// of names, or "detected" for every agent detected in env. An unknown name
// is an error that suggests the nearest one.
func Lookup(value string, env Env) ([]Agent, error) {
	var out []Agent
	seen := map[string]bool{}
	for _, n := range strings.Split(value, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if n == "detected" {
			found := false
			for _, a := range table() {
				if env.Detected(a) {
					found = true
					if !seen[a.Name] {
						seen[a.Name] = true
						out = append(out, a)
					}
				}
			}
			if !found {
				return nil, fmt.Errorf("%w: no agent is detected here (see 'agent skill agents'); name one, for example --agent claude-code", ErrUnknownAgent)
			}
			continue
		}
		a, ok := byName(n)
		if !ok {
			return nil, unknownAgent(n)
		}
		if !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: --agent needs a name (see 'agent skill agents') or 'detected'", ErrUnknownAgent)
	}
	return out, nil
}

// aliases are other names people use for an agent.
var aliases = map[string]string{
	"claude": "claude-code", "gemini": "gemini-cli", "copilot": "github-copilot",
	"kiro": "kiro-cli", "qwen": "qwen-code", "factory": "droid",
}

// ByName is the agent of that name or alias (claude is claude-code).
func ByName(n string) (Agent, bool) { return byName(strings.ToLower(n)) }

func byName(n string) (Agent, bool) {
	if a, ok := aliases[n]; ok {
		n = a
	}
	for _, a := range table() {
		if a.Name == n {
			return a, true
		}
	}
	return Agent{}, false
}

func unknownAgent(n string) error {
	names := make([]string, 0, len(table()))
	for _, a := range table() {
		names = append(names, a.Name)
	}
	hint := ""
	if best := manifest.Suggest(n, names); best != "" {
		hint = fmt.Sprintf("did you mean %q? ", best)
	}
	sort.Strings(names)
	return fmt.Errorf("%w %q; %sknown agents: %s (or 'detected')", ErrUnknownAgent, n, hint, strings.Join(names, ", "))
}

// Target is one folder a skill is placed in and the agents that read it.
type Target struct {
	Folder string   // as in the table: ".claude/skills", "~/.agents/skills"
	Agents []string // the named agents this folder serves
}

// Plan chooses few folders that serve every agent, so that no agent sees
// a skill twice: an agent that reads a folder already chosen needs no copy
// of its own (Copilot and Cursor read Claude Code's, several agents share
// .agents/skills). Agents are served in the order given; each uncovered
// agent gets, of the folders it reads, the one that serves the most agents
// still uncovered (its own first folder on a tie).
func Plan(agents []Agent, global bool) []Target {
	var out []Target
	covered := map[string]int{} // agent name -> index in out
	for _, a := range agents {
		if _, ok := covered[a.Name]; ok {
			continue
		}
		if i := servedBy(out, a, global); i >= 0 {
			out[i].Agents = append(out[i].Agents, a.Name)
			covered[a.Name] = i
			continue
		}
		best, bestN := "", -1
		for _, f := range a.Folders(global) {
			n := 0
			for _, b := range agents {
				if _, ok := covered[b.Name]; !ok && b.Reads(f, global) {
					n++
				}
			}
			if n > bestN {
				best, bestN = f, n
			}
		}
		if best == "" {
			continue
		}
		t := Target{Folder: best}
		for _, b := range agents {
			if _, ok := covered[b.Name]; !ok && b.Reads(best, global) {
				t.Agents = append(t.Agents, b.Name)
				covered[b.Name] = len(out)
			}
		}
		out = append(out, t)
	}
	return out
}

func servedBy(ts []Target, a Agent, global bool) int {
	for i, t := range ts {
		if a.Reads(t.Folder, global) {
			return i
		}
	}
	return -1
}
