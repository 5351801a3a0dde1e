package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentskills/agent/internal/app/workspace"
	"github.com/agentskills/agent/registry"
	"github.com/agentskills/agent/registry/deps"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// depFinder fetches what agent.requires names for add. A requirement
// with a version constraint is met from the repository's version tags
// (the highest tag the constraint allows); a repository without version
// tags offers its default branch, at the agent.version its SKILL.md gives.
// One fetch per repository and constraint, whatever number of skills it
// serves.
type depFinder struct {
	pipe     *registry.Pipeline
	progress io.Writer
	found    map[string]fetchedAt      // by source URL and constraint
	roots    map[string]deps.Candidate // the skills the user named, by URL//path
}

// fetchedAt is one fetched commit of a source: what discovery found
// there, the tag and version it was fetched at ("" for a branch tip), and
// the accepted key that signed it ("" for none; the fetch checked it).
type fetchedAt struct {
	d                    *gitsrc.Discovery
	ref, version, signer string
	err                  error
}

// depData is how to add a resolved dependency.
type depData struct {
	src    gitsrc.Source
	dir    string
	m      *manifest.Manifest
	signer string // the accepted key that signed what was resolved
}

func depKey(url, dir string) string {
	dir = strings.Trim(dir, "/")
	if dir == "." {
		dir = ""
	}
	return strings.TrimSuffix(strings.TrimRight(url, "/"), ".git") + "//" + dir
}

// fetch fetches src at the highest version tag constraint allows, or at
// its default branch when constraint allows anything or the repository
// has no version tags.
func (f *depFinder) fetch(ctx context.Context, src gitsrc.Source, constraint string) fetchedAt {
	if constraint == "*" {
		constraint = ""
	}
	key := src.URL + "@" + constraint
	if at, ok := f.found[key]; ok {
		return at
	}
	src.Ref, src.Constraint = "", constraint
	d, snap, err := f.pipe.FindSkills(ctx, src, f.progress)
	var at fetchedAt
	switch {
	case errors.Is(err, gitsrc.ErrNoTags):
		at = f.fetch(ctx, src, "")
	case err != nil:
		at = fetchedAt{err: err}
	case snap.Kind == "tag":
		at = fetchedAt{d: d, ref: snap.Ref, version: snap.Version, signer: snap.Signer}
	default:
		at = fetchedAt{d: d, signer: snap.Signer}
	}
	f.found[key] = at
	return at
}

// Find returns the version of r's skill that r's constraint picks from
// the source: none (and no error) when no version tag matches it.
func (f *depFinder) Find(ctx context.Context, r manifest.Requirement) ([]deps.Candidate, error) {
	src, err := gitsrc.ParseSource(r.Source)
	if err != nil {
		return nil, err
	}
	if c, ok := f.roots[depKey(src.URL, r.Path)]; ok {
		return []deps.Candidate{c}, nil
	}
	at := f.fetch(ctx, src, r.Constraint)
	if at.err != nil {
		return nil, at.err
	}
	var sel []string
	if r.Path != "" {
		sel = []string{r.Path}
	}
	fs, err := at.d.Select(sel, false, r.Source)
	if err != nil {
		return nil, err
	}
	if len(fs) != 1 || fs[0].Manifest == nil {
		return nil, fmt.Errorf("%s holds %d skills; name one with //<path>", r.Source, len(fs))
	}
	sf := fs[0]
	name, err := manifest.Canonical(sf.Manifest.Name)
	if err != nil {
		return nil, err
	}
	if c, ok := f.roots[depKey(src.URL, sf.Dir)]; ok {
		return []deps.Candidate{c}, nil
	}
	reqs, err := sf.Manifest.Requires()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	version := at.version
	if version == "" {
		version = sf.Manifest.Version
	}
	// A version from a tag is installed at the highest tag that every
	// requirer allows (addDeps), which update then moves within; one
	// from the default branch follows that branch.
	src.Ref, src.Constraint = at.ref, ""
	return []deps.Candidate{{Name: name, Version: version, Requires: reqs, Source: depKey(src.URL, sf.Dir),
		Data: depData{src: src, dir: sf.Dir, m: sf.Manifest, signer: at.signer}}}, nil
}

// resolveAdd resolves what the named skills require, before anything is
// written: the dependencies to add (installed ones that satisfy their
// constraints are left alone), or why the graph cannot be installed.
func resolveAdd(ctx context.Context, store *registry.Store, pipe *registry.Pipeline, progress io.Writer, src gitsrc.Source, rs []registry.Reviewed) ([]deps.Node, error) {
	var roots []deps.Candidate
	var reqs []manifest.Requirement
	any := false
	for _, r := range rs {
		rq, err := r.Manifest.Requires()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Canonical, err)
		}
		any = any || len(rq) > 0
		roots = append(roots, deps.Candidate{Name: r.Canonical, Version: r.Manifest.Version, Requires: rq, Source: depKey(src.URL, r.Path)})
		reqs = append(reqs, manifest.Requirement{Source: src.URL, Path: strings.Trim(r.Path, "/."), Constraint: "*"})
	}
	if !any {
		return nil, nil
	}
	return resolveFrom(ctx, store, pipe, progress, roots, reqs)
}

// resolveFrom resolves the graph below roots (the skills being added or
// moved, each with its requirement) and returns the dependencies it would
// install: what no installed skill already provides.
func resolveFrom(ctx context.Context, store *registry.Store, pipe *registry.Pipeline, progress io.Writer, roots []deps.Candidate, reqs []manifest.Requirement) ([]deps.Node, error) {
	f := &depFinder{pipe: pipe, progress: progress, found: map[string]fetchedAt{}, roots: map[string]deps.Candidate{}}
	for _, c := range roots {
		f.roots[c.Source] = c
	}
	g, err := deps.Resolve(ctx, reqs, f)
	if err != nil {
		return nil, err
	}
	var out []deps.Node
	for _, n := range g.Nodes {
		d, ok := n.Data.(depData)
		if !ok {
			continue // a root
		}
		if e, err := store.Get(n.Name); err == nil {
			if depKey(e.URL, e.Subdir) != n.Source {
				return nil, fmt.Errorf("resolve %s: %w: %s requires it from %s, and the installed %s comes from %s", n.Name, deps.ErrConflict, strings.Join(n.Requirers, ", "), d.src.URL, n.Name, e.URL)
			}
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// writeDeps lists, before the prompt, every dependency add would install,
// and which of them will be trusted: all with --trust-deps, else those an
// accepted key signed. Resolving fetched each one through the signer
// policy, so the signer is known; a signer listed for a source does not
// make what comes from it signed (one listed for every source does not
// require a signature).
func writeDeps(w io.Writer, ns []deps.Node, trusted bool) {
	untrusted := 0
	for _, n := range ns {
		d := n.Data.(depData)
		where := d.src.URL
		if d.dir != "" {
			where += " (" + d.dir + ")"
		}
		fmt.Fprint(w, workspace.EscapeTerminal(fmt.Sprintf("Skill %s %s, required by %s, from %s: %s\n", n.Name, versionOrDash(n.Version), strings.Join(n.Requirers, ", "), where, workspace.FirstLine(d.m.Description, 120))))
		writeGrants(w, d.m.Permissions)
		switch {
		case trusted:
		case d.signer != "":
			fmt.Fprintln(w, workspace.EscapeTerminal("  trusted for its signature: signed by "+d.signer))
		default:
			untrusted++
		}
	}
	if untrusted > 0 {
		fmt.Fprintln(w, "The skills it requires are installed untrusted: trust each yourself, or pass --trust-deps.")
	}
}

// auditDeps audits every resolved dependency from its fetched files, as
// add audits a skill the user named, before anything is written: a finding
// at or above audit.fail_on refuses the whole add unless --trust=NAME
// names that dependency. One inspection per repository.
func auditDeps(ctx context.Context, pipe *registry.Pipeline, progress io.Writer, ns []deps.Node, gate *auditGate) error {
	if auditOnAdd == "off" {
		return nil
	}
	type repo struct {
		src  gitsrc.Source
		dirs []string
	}
	var order []string
	repos := map[string]*repo{}
	for _, n := range ns {
		d := n.Data.(depData)
		r, ok := repos[d.src.URL]
		if !ok {
			r = &repo{src: d.src}
			repos[d.src.URL] = r
			order = append(order, d.src.URL)
		}
		dir := d.dir
		if dir == "" {
			dir = "."
		}
		r.dirs = append(r.dirs, dir)
	}
	var errs []error
	for _, url := range order {
		r := repos[url]
		err := pipe.Inspect(ctx, r.src, r.dirs, progress, func(rs []registry.Reviewed) error {
			for _, rv := range rs {
				errs = append(errs, gate.check(rv.Canonical, r.src.Raw, rv.FS, rv.Manifest))
			}
			return nil
		})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// dropUnneeded removes the dependencies add installed (deps) that no
// skill it installed (named) requires any more, after the named skills or
// a later dependency failed: an add that fails leaves nothing behind. It
// returns the dependencies that stay.
func dropUnneeded(ctx context.Context, store *registry.Store, errOut io.Writer, graph []deps.Node, deps, named []registry.Entry) []registry.Entry {
	kept := map[string]bool{}
	for _, e := range named {
		kept[e.Canonical] = true
	}
	for changed := true; changed; {
		changed = false
		for _, n := range graph {
			if kept[n.Name] {
				continue
			}
			for _, by := range n.Requirers {
				if kept[by] {
					kept[n.Name], changed = true, true
					break
				}
			}
		}
	}
	var stay []registry.Entry
	for i := len(deps) - 1; i >= 0; i-- {
		e := deps[i]
		if kept[e.Canonical] {
			stay = append([]registry.Entry{e}, stay...)
			continue
		}
		if _, err := store.Remove(ctx, e.Canonical); err != nil {
			fmt.Fprintf(errOut, "warning: %s was installed for a skill that failed to install, and removing it failed: %v; remove it with 'agent skill remove %s'\n", e.Canonical, err, e.Canonical)
			stay = append([]registry.Entry{e}, stay...)
			continue
		}
		fmt.Fprintf(errOut, "Removed %s again: the skill that required it was not installed\n", e.Canonical)
	}
	return stay
}

// addDeps installs the resolved dependencies, each from its source; they
// were audited before anything was written (auditDeps). The first that
// fails ends it: the ones before it are returned with its error.
func addDeps(ctx context.Context, pipe *registry.Pipeline, ns []deps.Node, trusted bool, prep registry.Prepare, req registry.AddRequest) ([]registry.Entry, error) {
	var out []registry.Entry
	for _, n := range ns {
		d := n.Data.(depData)
		r := req
		r.Source, r.Skills, r.All, r.Name, r.Trusted, r.Review = d.src, nil, false, "", trusted, nil
		r.Skill = d.dir
		if d.src.Ref != "" {
			r.Source.Ref, r.Source.Constraint = "", n.Constraint
		}
		es, err := pipe.AddSkills(ctx, r, prep)
		out = append(out, es...)
		if err != nil {
			return out, fmt.Errorf("add %s, required by %s: %w", n.Name, strings.Join(n.Requirers, ", "), err)
		}
	}
	return out, nil
}
