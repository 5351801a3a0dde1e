package gitsrc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentskills/agent/internal/ground/parallel"
	"github.com/agentskills/agent/registry/manifest"
)

// Discovery limits (SPEC §6). The full walk is bounded in depth and in the
// number of directories it opens, so a hostile or huge repository costs a
// fixed amount of work.
const (
	skillsDepth   = 3      // skills/ is searched this many levels down
	walkDepth     = 6      // the full walk goes this many levels down
	walkMaxDirs   = 20_000 // and opens at most this many directories
	maxPluginJSON = 1 << 20
)

// walkSkip are folders the full walk never enters. testdata holds test
// fixtures by Go's convention (the go tool ignores it too): a repository's
// example skills are what a listing of it should show, not the broken
// SKILL.md files its tests feed a parser.
var walkSkip = map[string]bool{".git": true, "node_modules": true, "vendor": true, "dist": true, "build": true, "__pycache__": true, "testdata": true}

// SearchOrder describes where Discover looks, for messages.
var SearchOrder = []string{
	"SKILL.md",
	"*/SKILL.md",
	"skills/ three levels down (with .curated, .experimental, .system)",
	"plugins/*/skills/*/SKILL.md",
	".<agent>/skills/*/SKILL.md (.claude, .agents, .codex, .github, .cursor, ...)",
	".claude-plugin/marketplace.json and plugin.json",
	"the whole tree 6 levels down",
}

// Found is one skill found in a repository.
type Found struct {
	Dir      string             // slash path relative to the repository root; "" for the root
	Via      string             // where the search found it, such as "skills/" or "marketplace.json"
	Manifest *manifest.Manifest // nil when Err is set
	Warnings []manifest.Problem
	Err      error // why the SKILL.md cannot be used
}

// Name is the skill's canonical name, or its folder name if the manifest is
// unusable.
func (f Found) Name() string {
	if f.Manifest != nil {
		return f.Manifest.Name
	}
	return f.folder()
}

// Path is Dir, or "." for the repository root.
func (f Found) Path() string {
	if f.Dir == "" {
		return "."
	}
	return f.Dir
}

func (f Found) folder() string { return path.Base(f.Path()) }

func (f Found) String() string {
	if f.Err != nil {
		return fmt.Sprintf("%s (%s, invalid)", f.Name(), f.Path())
	}
	return fmt.Sprintf("%s (%s)", f.Name(), f.Path())
}

// Discovery is what Discover found in one repository tree.
type Discovery struct {
	Skills []Found // sorted by Dir; two may share a name, and both are kept
	Step   int     // the SPEC §6 step that found them: 1, 2 or 3 (0: none)

	fsys     fs.FS
	rootName string
	walked   bool
	listings map[string][]fs.DirEntry // directories read so far, at most walkMaxDirs
	// unsafe is the first folder read that holds an entry no checkout
	// may write (ErrUnsafeEntry): Select refuses the repository then.
	unsafe error
}

// Discover finds the skills in a repository tree, in the order of SPEC §6,
// stopping at the first step that finds anything: (1) the root SKILL.md;
// (2) */SKILL.md, skills/ three levels down, plugins/*/skills/*, hidden
// agent folders .<agent>/skills/*, and the skills that
// .claude-plugin/marketplace.json or plugin.json declare; (3) the whole
// tree six levels down. rootName is the repository's name: the folder name
// of a root skill that declares none. Symbolic links are never followed: a
// linked folder is skipped and a linked SKILL.md is reported as invalid.
//
// fsys may be os.DirFS of a checkout or the tree of a git commit.
func Discover(fsys fs.FS, rootName string) (*Discovery, error) {
	d := &Discovery{fsys: fsys, rootName: rootName, listings: map[string][]fs.DirEntry{}}
	if _, err := fs.ReadDir(fsys, "."); err != nil {
		return nil, fmt.Errorf("discover skills in %s: %w", rootName, err)
	}
	if f, ok := d.load("", "root"); ok {
		d.Skills, d.Step = []Found{f}, 1
		return d, nil
	}
	d.Skills = d.step2()
	if len(d.Skills) > 0 {
		d.Step = 2
		return d, nil
	}
	d.Skills = d.walk()
	if len(d.Skills) > 0 {
		d.Step = 3
	}
	return d, nil
}

// Detach drops the repository behind d, so that what was found stays
// readable after the snapshot is gone.
func (d *Discovery) Detach() { d.fsys = nil }

// step2 collects every location of step 2 together.
func (d *Discovery) step2() []Found {
	var cands []candidate
	seen := map[string]bool{}
	add := func(dir, via string) {
		if !seen[dir] {
			seen[dir] = true
			cands = append(cands, candidate{dir, via})
		}
	}
	top := d.subdirs(".")
	for _, name := range top {
		if !strings.HasPrefix(name, ".") {
			add(name, "*/SKILL.md")
		}
	}
	d.descend("skills", skillsDepth, "skills/", add)
	for _, p := range d.subdirs("plugins") {
		for _, s := range d.subdirs(path.Join("plugins", p, "skills")) {
			add(path.Join("plugins", p, "skills", s), "plugins/*/skills/")
		}
	}
	for _, name := range top {
		if strings.HasPrefix(name, ".") && name != ".git" {
			for _, s := range d.subdirs(path.Join(name, "skills")) {
				add(path.Join(name, "skills", s), name+"/skills/")
			}
		}
	}
	for _, dir := range d.declared() {
		add(dir.path, dir.via)
	}
	out := d.loadAll(cands)
	sortFound(out)
	return out
}

type candidate struct{ dir, via string }

// loadAll loads cands and returns the skills found, in the order of
// cands. The files are read in turn (the object store takes one reader
// at a time: readers on every core only queued on its lock) and parsed on
// every core (parsing a thousand SKILL.md files was a third of
// discovering a large repository).
func (d *Discovery) loadAll(cands []candidate) []Found {
	var (
		out    []Found
		parses []func(*Found)
	)
	for _, c := range cands {
		if f, parse, ok := d.read(c.dir, c.via); ok {
			out = append(out, f)
			parses = append(parses, parse)
		}
	}
	parallel.For(len(out), 0, func(i int) {
		if parses[i] != nil {
			parses[i](&out[i])
		}
	})
	return out
}

// descend adds the skills under dir down to depth levels, hidden folders
// included (skills/.curated); it does not look inside a skill.
func (d *Discovery) descend(dir string, depth int, via string, add func(dir, via string)) {
	if depth == 0 {
		return
	}
	for _, s := range d.subdirs(dir) {
		p := path.Join(dir, s)
		if d.hasManifest(p) {
			add(p, via)
			continue
		}
		d.descend(p, depth-1, via, add)
	}
}

// walk is step 3: the whole tree to walkDepth, skipping walkSkip. It does
// not look inside a skill.
func (d *Discovery) walk() []Found {
	d.walked = true
	var out []Found
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		if depth > walkDepth {
			return
		}
		for _, s := range d.subdirs(dir) {
			if walkSkip[s] {
				continue
			}
			p := path.Join(dir, s)
			if d.hasManifest(p) {
				if f, ok := d.load(p, "full walk"); ok {
					out = append(out, f)
				}
				continue
			}
			visit(p, depth+1)
		}
	}
	visit(".", 1)
	sortFound(out)
	return out
}

type declaredDir struct{ path, via string }

// declared lists the skill folders that .claude-plugin/marketplace.json and
// plugin.json name. Paths that leave the repository are ignored.
func (d *Discovery) declared() []declaredDir {
	var out []declaredDir
	// A plugin's skills: its "skills" list (folders of skills, or folders
	// holding skill folders), else its skills/ folder.
	plugin := func(root string, skills []string, via string) {
		if len(skills) == 0 {
			if pj := d.pluginJSON(path.Join(root, ".claude-plugin", "plugin.json")); pj != nil {
				skills = pj.skillPaths()
				via = path.Join(root, ".claude-plugin/plugin.json")
			}
		}
		if len(skills) == 0 {
			skills = []string{"skills"}
		}
		for _, s := range skills {
			p, ok := inside(path.Join(root, s))
			if !ok {
				continue
			}
			if d.hasManifest(p) {
				out = append(out, declaredDir{p, via})
				continue
			}
			for _, c := range d.subdirs(p) {
				out = append(out, declaredDir{path.Join(p, c), via})
			}
		}
	}
	if mj := d.pluginJSON(".claude-plugin/marketplace.json"); mj != nil {
		for _, p := range mj.Plugins {
			var src string
			if json.Unmarshal(p.Source, &src) != nil {
				continue // a remote source: not in this repository
			}
			root, ok := inside(src)
			if !ok {
				continue
			}
			plugin(root, p.Skills.list(), "marketplace.json")
		}
	}
	if pj := d.pluginJSON(".claude-plugin/plugin.json"); pj != nil {
		plugin(".", pj.skillPaths(), "plugin.json")
	}
	return out
}

// pluginManifest is the part of a Claude Code marketplace.json or
// plugin.json that names skills.
type pluginManifest struct {
	Plugins []struct {
		Source json.RawMessage `json:"source"`
		Skills stringOrList    `json:"skills"`
	} `json:"plugins"`
	Skills stringOrList `json:"skills"`
}

func (p *pluginManifest) skillPaths() []string { return p.Skills.list() }

// stringOrList is a JSON string or list of strings.
type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return nil // another shape: not a list of paths, ignored
	}
	*s = many
	return nil
}

func (s stringOrList) list() []string { return s }

func (d *Discovery) pluginJSON(file string) *pluginManifest {
	data, ok := d.readRegular(file, maxPluginJSON)
	if !ok {
		return nil
	}
	var pm pluginManifest
	if json.Unmarshal(data, &pm) != nil {
		return nil
	}
	return &pm
}

// inside cleans a path from a plugin manifest and reports whether it stays
// inside the repository.
func inside(p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || strings.ContainsRune(p, 0) {
		return "", false
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// Select picks skills by name (case-insensitive, canonical) or by folder
// path. With all it returns every usable skill. With no selector it
// returns the only skill, or ErrAmbiguousSkill. A selector that the search
// steps did not reach is looked for in the full walk (and at its own path)
// before it is an error. A name two skills share is an error listing both
// paths. source names the repository in messages.
func (d *Discovery) Select(selectors []string, all bool, source string) ([]Found, error) {
	out, err := d.selectFound(selectors, all, source)
	if d.unsafe != nil {
		return nil, fmt.Errorf("%s: %w", source, d.unsafe)
	}
	return out, err
}

func (d *Discovery) selectFound(selectors []string, all bool, source string) ([]Found, error) {
	if all {
		if len(selectors) > 0 {
			return nil, fmt.Errorf("give skill names or --all, not both")
		}
		if err := d.duplicates(); err != nil {
			return nil, err
		}
		var out []Found
		for _, f := range d.Skills {
			if f.Err == nil {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			return nil, d.noSkill(source)
		}
		return out, nil
	}
	if len(selectors) == 0 {
		switch {
		case len(d.Skills) == 0:
			return nil, d.noSkill(source)
		case len(d.Skills) == 1:
			return d.Skills, d.Skills[0].Err
		}
		return nil, fmt.Errorf("%w in %s: %s; name one or more (agent skill add %s <skill>...), or add them all with --all", ErrAmbiguousSkill, source, listFound(d.Skills), source)
	}
	var out []Found
	picked := map[string]bool{}
	for _, sel := range selectors {
		f, err := d.selectOne(sel, source)
		if err != nil {
			return nil, err
		}
		if f.Err != nil {
			return nil, f.Err
		}
		if !picked[f.Dir] {
			picked[f.Dir] = true
			out = append(out, f)
		}
	}
	return out, nil
}

func (d *Discovery) selectOne(sel, source string) (Found, error) {
	rel := strings.Trim(path.Clean("/"+sel), "/")
	if sel == "" || strings.ContainsRune(sel, 0) {
		return Found{}, fmt.Errorf("select skill %q: %w", sel, manifest.ErrInvalidName)
	}
	matches := d.match(sel, rel)
	if len(matches) == 0 && strings.Contains(rel, "/") {
		// A folder path outside the search locations (step 1).
		if f, ok := d.load(rel, "path"); ok {
			d.Skills = append(d.Skills, f)
			sortFound(d.Skills)
			matches = []Found{f}
		}
	}
	if len(matches) == 0 && !d.walked {
		for _, f := range d.walk() {
			if !d.has(f.Dir) {
				d.Skills = append(d.Skills, f)
			}
		}
		sortFound(d.Skills)
		matches = d.match(sel, rel)
	}
	switch len(matches) {
	case 0:
		if len(d.Skills) == 0 {
			return Found{}, fmt.Errorf("%w named %q: %w", ErrNoSkill, sel, d.noSkill(source))
		}
		return Found{}, fmt.Errorf("%w named %q in %s; found: %s", ErrNoSkill, sel, source, listFound(d.Skills))
	case 1:
		return matches[0], nil
	}
	return Found{}, fmt.Errorf("%w: %q names %d skills in %s: %s; pick one by its folder path, for example agent skill add %s %s",
		ErrAmbiguousSkill, sel, len(matches), source, listFound(matches), source, matches[0].Path())
}

// match finds sel as a folder path, else as a manifest name, else as a
// folder name.
func (d *Discovery) match(sel, rel string) []Found {
	var byPath, byName, byFolder []Found
	want := canonicalOr(manifest.RecoverName(path.Base(rel)))
	for _, f := range d.Skills {
		switch {
		case f.Dir == rel || (rel == "" && f.Dir == ""):
			byPath = append(byPath, f)
		case f.Manifest != nil && canonicalOr(f.Manifest.Name) == canonicalOr(manifest.RecoverName(sel)):
			byName = append(byName, f)
		case canonicalOr(manifest.RecoverName(f.folder())) == want:
			byFolder = append(byFolder, f)
		}
	}
	switch {
	case len(byPath) > 0:
		return byPath
	case len(byName) > 0:
		return byName
	}
	return byFolder
}

func (d *Discovery) has(dir string) bool {
	for _, f := range d.Skills {
		if f.Dir == dir {
			return true
		}
	}
	return false
}

// duplicates reports skills that share a canonical name, listing every
// path: --all cannot install two under one name.
func (d *Discovery) duplicates() error {
	byName := map[string][]Found{}
	var names []string
	for _, f := range d.Skills {
		if f.Manifest == nil {
			continue
		}
		c := canonicalOr(f.Manifest.Name)
		if len(byName[c]) == 0 {
			names = append(names, c)
		}
		byName[c] = append(byName[c], f)
	}
	var msgs []string
	for _, n := range names {
		if fs := byName[n]; len(fs) > 1 {
			var paths []string
			for _, f := range fs {
				paths = append(paths, f.Path())
			}
			msgs = append(msgs, fmt.Sprintf("%q at %s", n, strings.Join(paths, " and ")))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%w with one name: %s; add them one at a time by folder path, giving one of them another --name", ErrAmbiguousSkill, strings.Join(msgs, "; "))
}

// Duplicates lists the names that several found skills share, each with
// its paths, for listings.
func (d *Discovery) Duplicates() map[string][]string {
	out := map[string][]string{}
	count := map[string]int{}
	for _, f := range d.Skills {
		if f.Manifest != nil {
			count[canonicalOr(f.Manifest.Name)]++
		}
	}
	for _, f := range d.Skills {
		if f.Manifest != nil {
			if c := canonicalOr(f.Manifest.Name); count[c] > 1 {
				out[c] = append(out[c], f.Path())
			}
		}
	}
	return out
}

func (d *Discovery) noSkill(source string) error {
	// The walk has listed every folder by now: a SKILL.md in another case
	// is named with its rename, since no reader (Claude Code included)
	// looks for it.
	var hints []string
	for dir, ents := range d.listings {
		for _, e := range ents {
			if !e.IsDir() && manifest.IsOtherCase(e.Name()) {
				hints = append(hints, manifest.RenameHint(path.Join(dir, e.Name())))
			}
		}
	}
	if len(hints) > 0 {
		sort.Strings(hints)
		return fmt.Errorf("%w in %s: %s", ErrNoSkill, source, strings.Join(hints, "; "))
	}
	return fmt.Errorf("%w in %s: looked at %s; a skill needs a SKILL.md in one of those places", ErrNoSkill, source, strings.Join(SearchOrder, ", "))
}

func listFound(fs []Found) string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = f.String()
	}
	return strings.Join(s, ", ")
}

func sortFound(fs []Found) { sort.Slice(fs, func(i, j int) bool { return fs[i].Dir < fs[j].Dir }) }

// subdirs lists dir's real subdirectories (never links), sorted. A folder
// that is missing, a link or not a directory has none.
func (d *Discovery) subdirs(dir string) []string {
	if !d.realDir(dir) {
		return nil
	}
	var out []string
	for _, e := range d.list(dir) {
		if e.Type()&fs.ModeSymlink == 0 && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// realDir checks that every component of dir is a directory and not a
// link. os.DirFS follows links, so each step is checked on its parent's
// listing.
func (d *Discovery) realDir(dir string) bool {
	if dir == "." || dir == "" {
		return true
	}
	if !fs.ValidPath(dir) {
		return false
	}
	parent := "."
	for _, part := range strings.Split(dir, "/") {
		fi, ok := d.entry(parent, part)
		if !ok || fi.Type()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return false
		}
		parent = path.Join(parent, part)
	}
	return true
}

// list reads dir once; past walkMaxDirs directories it reads no more.
func (d *Discovery) list(dir string) []fs.DirEntry {
	if ents, ok := d.listings[dir]; ok {
		return ents
	}
	if d.fsys == nil || len(d.listings) >= walkMaxDirs {
		return nil
	}
	ents, err := fs.ReadDir(d.fsys, dir)
	if err != nil {
		if errors.Is(err, ErrUnsafeEntry) && d.unsafe == nil {
			d.unsafe = err
		}
		ents = nil
	}
	d.listings[dir] = ents
	return ents
}

// entry is name's directory entry in dir, without following a link.
func (d *Discovery) entry(dir, name string) (fs.DirEntry, bool) {
	ents := d.list(dir)
	i := sort.Search(len(ents), func(i int) bool { return ents[i].Name() >= name })
	if i < len(ents) && ents[i].Name() == name {
		return ents[i], true
	}
	return nil, false
}

// manifestName is the name of dir's manifest (manifest.FindName), "" when
// it has none; a link counts, so that load can report it.
func (d *Discovery) manifestName(dir string) string {
	return manifest.FindName(func(name string) bool {
		e, ok := d.entry(dir, name)
		return ok && !e.IsDir()
	})
}

// hasManifest reports whether dir holds a manifest.
func (d *Discovery) hasManifest(dir string) bool { return d.manifestName(dir) != "" }

// readRegular reads file if it is a regular file (not a link) of at most
// limit bytes.
func (d *Discovery) readRegular(file string, limit int64) ([]byte, bool) {
	if !d.realDir(path.Dir(file)) {
		return nil, false
	}
	e, ok := d.entry(path.Dir(file), path.Base(file))
	if !ok || !e.Type().IsRegular() {
		return nil, false
	}
	f, err := d.fsys.Open(file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit {
		return nil, false
	}
	return data, true
}

// load reads dir/SKILL.md if there is one; ok is false when there is none.
func (d *Discovery) load(dir, via string) (Found, bool) {
	f, parse, ok := d.read(dir, via)
	if parse != nil {
		parse(&f)
	}
	return f, ok
}

// read is load without the parse: it returns the parse to run (nil when
// f is final), which needs nothing of d, so that loadAll can run it on
// another core.
func (d *Discovery) read(dir, via string) (Found, func(*Found), bool) {
	rel := dir
	if rel == "" {
		rel = "."
	}
	if !d.realDir(rel) {
		return Found{}, nil, false
	}
	name := d.manifestName(rel)
	if name == "" {
		return Found{}, nil, false
	}
	e, _ := d.entry(rel, name)
	display := path.Join(dir, name)
	f := Found{Dir: dir, Via: via}
	if !e.Type().IsRegular() {
		f.Err = &manifest.ManifestError{Problems: []manifest.Problem{{File: display, Message: "SKILL.md is a symbolic link or not a regular file; links are refused, commit the real file"}}}
		return f, nil, true
	}
	data, ok := d.readRegular(path.Join(rel, name), manifest.MaxManifestSize)
	if !ok {
		f.Err = &manifest.ManifestError{Problems: []manifest.Problem{{File: display, Message: fmt.Sprintf("SKILL.md cannot be read or is larger than %d bytes; move long material to references/", manifest.MaxManifestSize)}}}
		return f, nil, true
	}
	folder := path.Base(dir)
	if dir == "" {
		folder = d.rootName
	}
	return f, func(f *Found) { f.Manifest, f.Warnings, f.Err = manifest.ParseManifestIn(display, folder, data) }, true
}

// RepoName is the name of a repository from its URL or path
// ("https://github.com/o/skills.git" gives "skills"): the folder name of a
// root skill that declares no name.
func RepoName(url string) string {
	u := strings.TrimRight(filepath.ToSlash(url), "/")
	u = strings.TrimSuffix(u, ".git")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	return u
}

func canonicalOr(name string) string {
	c, err := manifest.Canonical(name)
	if err != nil {
		return "\x00" + name
	}
	return c
}

// LoadManifestAs loads dir's manifest but names it inside displayDir in
// messages (displayDir/SKILL.md, or skill.md), so that errors show the
// path inside the repository rather than a temp dir.
func LoadManifestAs(dir, displayDir string) (*manifest.Manifest, []manifest.Problem, error) {
	m, warns, err := LoadManifest(dir)
	rename := func(ps []manifest.Problem) {
		for i := range ps {
			ps[i].File = path.Join(displayDir, filepath.Base(ps[i].File))
		}
	}
	rename(warns)
	var me *manifest.ManifestError
	if errors.As(err, &me) {
		rename(me.Problems)
	}
	return m, warns, err
}

// realDir checks that every component of rel under root is a real
// directory, so that a path can never leave root through a link.
func realDir(root, rel string) error {
	if !manifest.InsideRel(rel) && rel != "" {
		return fmt.Errorf("%s: path leaves the repository", rel)
	}
	cur := root
	for _, part := range strings.Split(path.Clean(rel), "/") {
		if part == "." || part == "" {
			continue
		}
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s: not a directory (symbolic links are not followed)", rel)
		}
	}
	return nil
}

// CopySkill copies the skill folder src to dst (which must not exist),
// leaving out .git and __pycache__. A symbolic link is kept only when it is relative and
// stays inside src; any other link is an error, because the installed skill
// must not reach outside itself.
func CopySkill(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if (d.Name() == ".git" || d.Name() == pycache) && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			joined := filepath.Join(filepath.Dir(rel), target)
			if filepath.IsAbs(target) || !manifest.InsideRel(filepath.ToSlash(joined)) {
				return fmt.Errorf("copy skill: %s is a symbolic link to %s, outside the skill; replace it with the file", filepath.ToSlash(rel), target)
			}
			return os.Symlink(target, out)
		case t.IsRegular():
			return copyFile(p, out)
		}
		return nil // sockets, devices: git cannot hold them
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	_, err = createCopy(dst, in, fi)
	return err
}
