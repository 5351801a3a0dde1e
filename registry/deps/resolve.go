package deps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// Sentinel errors; Resolve wraps them with the skills involved.
var (
	ErrConflict = errors.New("conflicting requirements")
	ErrCycle    = errors.New("dependency cycle")
	// ErrRequired refuses to remove a skill another installed skill
	// requires.
	ErrRequired = errors.New("another installed skill requires it")
)

// User is the requirer of what the user named on the command line.
const User = "(you)"

// Candidate is one version of a skill that a source offers.
type Candidate struct {
	Name     string                 // canonical name
	Version  string                 // semver; "" for an unversioned skill, which only "*" accepts
	Requires []manifest.Requirement // its agent.requires
	// Source identifies where it came from (a repository URL and path);
	// one name from two sources is a conflict.
	Source string
	// Data is the caller's: what it needs to install this candidate.
	Data any
}

// Finder lists the versions of a requirement's source that its
// constraint allows: at least the highest, or an error that wraps
// gitsrc.ErrNoMatchingVersion. A source without versions may offer its
// one unversioned skill whatever the constraint. Resolve asks once per
// distinct source, path and constraint, and, when no version it was given
// satisfies every requirer, once more with all their constraints joined;
// grouping the fetches by repository is the Finder's job.
type Finder interface {
	Find(ctx context.Context, r manifest.Requirement) ([]Candidate, error)
}

// FinderFunc adapts a function to Finder.
type FinderFunc func(ctx context.Context, r manifest.Requirement) ([]Candidate, error)

// Find calls f.
func (f FinderFunc) Find(ctx context.Context, r manifest.Requirement) ([]Candidate, error) {
	return f(ctx, r)
}

// Node is one skill of a resolved graph.
type Node struct {
	Candidate
	// Requirers are the skills that require this one, sorted; User when
	// the user named it.
	Requirers []string
	// Deps are the names of the skills it requires, sorted.
	Deps []string
	// Constraint joins what every requirer allows ("*": anything).
	Constraint string
}

// Graph is a resolved set of skills, sorted by name.
type Graph struct{ Nodes []Node }

// Find returns the node of name.
func (g *Graph) Find(name string) (Node, bool) {
	for _, n := range g.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

type want struct {
	by  string // the requirer
	req manifest.Requirement
}

// Resolve picks one version per skill reachable from roots (what the
// user named, each with its constraint). A name constrained so that no
// version satisfies all is ErrConflict, naming both requirers; a skill
// that requires itself through others is ErrCycle, naming the path.
func Resolve(ctx context.Context, roots []manifest.Requirement, f Finder) (*Graph, error) {
	found := map[string][]Candidate{} // by requirement location
	find := func(r manifest.Requirement) ([]Candidate, error) {
		k := r.Source + "//" + r.Path + "@" + r.Constraint
		if c, ok := found[k]; ok {
			return c, nil
		}
		c, err := f.Find(ctx, r)
		if err != nil {
			return nil, err
		}
		found[k] = c
		return c, nil
	}
	picks := map[string]Candidate{}
	// A fixed point: the constraints come from the roots and the current
	// picks, so one dropped when its requirer moves stops counting.
	for round := 0; ; round++ {
		if round > 100 {
			return nil, fmt.Errorf("resolve: the versions did not settle after 100 rounds: %w", ErrConflict)
		}
		wants := map[string][]want{}
		cands := map[string][]Candidate{}
		add := func(by string, r manifest.Requirement) error {
			cs, err := find(r)
			if err != nil {
				return fmt.Errorf("resolve %s (required by %s): %w", r, by, err)
			}
			if len(cs) == 0 {
				return fmt.Errorf("resolve %s (required by %s): the source offers no skill there", r, by)
			}
			name := cs[0].Name
			if prev := cands[name]; len(prev) > 0 && prev[0].Source != cs[0].Source {
				return fmt.Errorf("resolve %s: %w: %s comes from %s (required by %s) and from %s (required by %s); require it from one source", name, ErrConflict, name, prev[0].Source, wants[name][0].by, cs[0].Source, by)
			}
			cands[name] = union(cands[name], cs)
			wants[name] = append(wants[name], want{by: by, req: r})
			return nil
		}
		for _, r := range roots {
			if err := add(User, r); err != nil {
				return nil, err
			}
		}
		for _, name := range sortedKeys(picks) {
			for _, r := range picks[name].Requires {
				if err := add(name, r); err != nil {
					return nil, err
				}
			}
		}
		next := map[string]Candidate{}
		for name, ws := range wants {
			c, err := pick(name, cands[name], ws)
			if err != nil && len(ws) > 1 {
				// Each requirer's highest may be refused by another while
				// a lower version satisfies all: ask for that one.
				both := ws[0].req
				both.Constraint = Join(constraintsOf(ws)...)
				more, ferr := find(both)
				if ferr != nil && !errors.Is(ferr, gitsrc.ErrNoMatchingVersion) {
					return nil, fmt.Errorf("resolve %s: %w", both, ferr)
				}
				cands[name] = union(cands[name], more)
				c, err = pick(name, cands[name], ws)
			}
			if err != nil {
				return nil, err
			}
			next[name] = c
		}
		if same(picks, next) {
			return graph(picks, wants)
		}
		picks = next
	}
}

// union adds the candidates of cs that have is missing.
func union(have, cs []Candidate) []Candidate {
	for _, c := range cs {
		dup := false
		for _, h := range have {
			dup = dup || (h.Version == c.Version && h.Source == c.Source)
		}
		if !dup {
			have = append(have, c)
		}
	}
	return have
}

func constraintsOf(ws []want) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.req.Constraint
	}
	return out
}

// Join is the constraint that allows what every one of cs allows. A
// constraint's "||" binds looser than its ",", so alternatives are
// multiplied out: (a || b) and c is "a, c || b, c". One difference stays:
// Masterminds lets a prerelease through an AND group when any part names
// a prerelease, so the join may allow a prerelease that a part refuses;
// Resolve checks each requirer's own constraint again (pick).
func Join(cs ...string) string {
	alts := []string{""}
	for _, c := range cs {
		c = strings.TrimSpace(c)
		if c == "" || c == "*" {
			continue
		}
		var next []string
		for _, a := range alts {
			for _, o := range strings.Split(c, "||") {
				o = strings.TrimSpace(o)
				if a != "" {
					o = a + ", " + o
				}
				if !contains(next, o) {
					next = append(next, o)
				}
			}
		}
		alts = next
	}
	if len(alts) == 1 && alts[0] == "" {
		return "*"
	}
	return strings.Join(alts, " || ")
}

func pick(name string, cs []Candidate, ws []want) (Candidate, error) {
	var best *Candidate
	var bestV *semver.Version
	for i := range cs {
		v, ok := satisfiesAll(cs[i], ws)
		if !ok {
			continue
		}
		if best == nil || (v != nil && (bestV == nil || v.GreaterThan(bestV))) {
			best, bestV = &cs[i], v
		}
	}
	if best != nil {
		return *best, nil
	}
	return Candidate{}, conflict(name, cs, ws)
}

func satisfiesAll(c Candidate, ws []want) (*semver.Version, bool) {
	v := parse(c.Version)
	for _, w := range ws {
		if !satisfies(v, w.req.Constraint) {
			return nil, false
		}
	}
	return v, true
}

// parse is v as semver, or nil: an unversioned skill, or a version that
// is not semver, satisfies only "*".
func parse(v string) *semver.Version {
	pv, err := semver.NewVersion(v)
	if err != nil {
		return nil
	}
	return pv
}

func satisfies(v *semver.Version, constraint string) bool {
	if constraint == "*" || constraint == "" {
		return true
	}
	c, err := semver.NewConstraint(constraint)
	return err == nil && v != nil && c.Check(v)
}

// conflict names the first two requirers that no one version satisfies.
func conflict(name string, cs []Candidate, ws []want) error {
	var avail []string
	for _, c := range cs {
		if c.Version != "" {
			avail = append(avail, c.Version)
		}
	}
	have := "it offers no versions"
	sort.Slice(avail, func(i, j int) bool { return less(avail[i], avail[j]) })
	if len(avail) > 0 {
		have = "available: " + strings.Join(avail, ", ")
	}
	for i := range ws {
		for j := i + 1; j < len(ws); j++ {
			if _, ok := pickPair(cs, ws[i], ws[j]); !ok {
				return fmt.Errorf("resolve %s: %w: %s requires %s@%s and %s requires %s@%s; no version satisfies both (%s)",
					name, ErrConflict, ws[i].by, name, ws[i].req.Constraint, ws[j].by, name, ws[j].req.Constraint, have)
			}
		}
	}
	var by []string
	for _, w := range ws {
		by = append(by, fmt.Sprintf("%s requires %s@%s", w.by, name, w.req.Constraint))
	}
	return fmt.Errorf("resolve %s: %w: %s; no version satisfies all (%s)", name, ErrConflict, strings.Join(by, ", "), have)
}

// less orders versions by semver, and what does not parse by its text.
func less(a, b string) bool {
	va, ea := semver.NewVersion(a)
	vb, eb := semver.NewVersion(b)
	if ea != nil || eb != nil {
		return a < b
	}
	return va.LessThan(vb)
}

func pickPair(cs []Candidate, a, b want) (Candidate, bool) {
	for _, c := range cs {
		if _, ok := satisfiesAll(c, []want{a, b}); ok {
			return c, true
		}
	}
	return Candidate{}, false
}

func same(a, b map[string]Candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w.Version != v.Version || w.Source != v.Source {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func graph(picks map[string]Candidate, wants map[string][]want) (*Graph, error) {
	g := &Graph{}
	deps := map[string][]string{}
	for name, ws := range wants {
		seen := map[string]bool{}
		var by []string
		for _, w := range ws {
			if !seen[w.by] {
				seen[w.by] = true
				by = append(by, w.by)
			}
			if w.by != User {
				deps[w.by] = append(deps[w.by], name)
			}
		}
		sort.Strings(by)
		g.Nodes = append(g.Nodes, Node{Candidate: picks[name], Requirers: by, Constraint: Join(constraintsOf(ws)...)})
	}
	sort.Slice(g.Nodes, func(i, j int) bool { return g.Nodes[i].Name < g.Nodes[j].Name })
	for i := range g.Nodes {
		d := deps[g.Nodes[i].Name]
		sort.Strings(d)
		g.Nodes[i].Deps = d
	}
	if path := findCycle(deps); path != nil {
		return nil, fmt.Errorf("resolve: %w: %s; a skill cannot require itself, directly or through others", ErrCycle, strings.Join(path, " -> "))
	}
	return g, nil
}

// findCycle returns a cycle's path, first skill repeated at the end, or nil.
func findCycle(deps map[string][]string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = open
		stack = append(stack, n)
		ds := append([]string(nil), deps[n]...)
		sort.Strings(ds)
		for _, d := range ds {
			switch state[d] {
			case open:
				for i, s := range stack {
					if s == d {
						return append(append([]string(nil), stack[i:]...), d)
					}
				}
			case unseen:
				if p := visit(d); p != nil {
					return p
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, n := range sortedKeys(deps) {
		if state[n] == unseen {
			if p := visit(n); p != nil {
				return p
			}
		}
	}
	return nil
}
