package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentskills/agent/internal/ground/parallel"
	"github.com/agentskills/agent/internal/ground/platform"
	"github.com/agentskills/agent/registry/gitsrc"
	"github.com/agentskills/agent/registry/manifest"
)

// Staged is a skill checked out and validated in skills/.tmp, handed to
// Prepare before it is installed.
type Staged struct {
	Canonical string
	Manifest  *manifest.Manifest
	Warnings  []manifest.Problem

	RepoDir   string // the checked-out repository (a plugin may need its go.mod)
	SkillDir  string // the skill folder inside RepoDir
	CommitSHA string
	Version   string

	// PluginOut is where Prepare writes a built plugin binary; the registry
	// moves it to $AGENT_HOME/plugins/<canonical>/<sha>/ on commit.
	PluginOut string

	// Set by Prepare. Plugin.Path is PluginOut for a built plugin, or a path
	// inside SkillDir for plugin.command; the registry rewrites it to the
	// installed location.
	Plugin *Plugin
	Tools  []Tool
	// Runnable, set by Prepare, lists the skill's runnable script files
	// (names under scripts/), recorded so that listings read no folder.
	// nil means not listed: the entry then gets no Listing.
	Runnable []string
}

// Prepare builds a staged skill's plugin and describes its tools. The CLI
// supplies it so that registry never imports host. A nil Prepare does
// nothing.
type Prepare func(ctx context.Context, s *Staged) error

// AddRequest is what `agent skill add` asks for.
type AddRequest struct {
	Source  gitsrc.Source
	Skill   string   // [skill] selector: folder or manifest name
	Skills  []string // more selectors: several skills from one fetch
	All     bool     // every skill the repository holds
	Name    string   // --name: install under this name instead of the manifest's
	Trusted bool
	// RequireSigned installs only what an accepted key signed (the
	// signer policy, Store.Signatures): the caller did not ask the user,
	// and trusts it for being signed. Otherwise ErrNotVerified.
	RequireSigned bool
	AgentVersion  string
	Progress      io.Writer // nil is silent
	// Warn receives SKILL.md warnings (file:line: message); nil drops them.
	Warn func(msg string)
	// Review, when set, is shown the selected skills once they are
	// fetched and read, before anything is written or built; an error
	// from it ends the add with nothing installed (the prompt of an
	// untrusted add shows what each skill asks for).
	Review func(skills []Reviewed) error
}

// Reviewed is a selected skill as AddRequest.Review sees it.
type Reviewed struct {
	Canonical string
	Path      string // the skill's folder in the repository
	Manifest  *manifest.Manifest
	Warnings  []manifest.Problem
	// FS is the skill's folder in the fetched commit, for reading before
	// anything is written (agent skill audit).
	FS fs.FS
}

// Add clones req.Source, picks and validates the skill, lets prep build its
// plugin, and installs it. On any failure nothing is left behind.
func (s *Pipeline) Add(ctx context.Context, req AddRequest, prep Prepare) (Entry, error) {
	es, err := s.AddSkills(ctx, req, prep)
	if err != nil {
		return Entry{}, err
	}
	return es[0], nil
}

// AddSkills is Add for every skill req selects (req.Skill, req.Skills, or
// req.All), from one fetch. Selection is checked in full before anything is
// installed; then each skill is installed in turn, atomically. On an error
// the entries installed before it are returned with it.
func (s *Pipeline) AddSkills(ctx context.Context, req AddRequest, prep Prepare) ([]Entry, error) {
	es, err := s.add(ctx, req, prep)
	if err != nil {
		return es, fmt.Errorf("add %s: %w", req.Source.Raw, err)
	}
	return es, nil
}

// selectors are the [skill...] arguments of a request.
func (req AddRequest) selectors() []string {
	var out []string
	if req.Skill != "" {
		out = append(out, req.Skill)
	}
	return append(out, req.Skills...)
}

func (s *Pipeline) add(ctx context.Context, req AddRequest, prep Prepare) ([]Entry, error) {
	src := req.Source
	if src.URL == "" {
		parsed, err := gitsrc.ParseSource(src.Raw)
		if err != nil {
			return nil, err
		}
		parsed.Ref, parsed.Constraint = firstNonEmpty(src.Ref, parsed.Ref), firstNonEmpty(src.Constraint, parsed.Constraint)
		src = parsed
	}
	if src.Kind == 0 {
		// Built by hand, not by ParseSource: classify the URL, once.
		r := gitsrc.Recorded(src.URL)
		src.Kind, src.OCI = r.Kind, r.OCI
	}
	if src.Raw == "" {
		src.Raw = src.URL
	}
	if src.Ref != "" && src.Constraint != "" {
		return nil, fmt.Errorf("%w: give either a ref (%s) or a version constraint (%s), not both", gitsrc.ErrUnsupportedSource, src.Ref, src.Constraint)
	}
	var want string
	if req.Name != "" {
		c, err := manifest.Canonical(req.Name)
		if err != nil {
			return nil, err
		}
		want = c
	}
	var w *work
	err := s.Edit(func(entries []Entry) ([]Entry, error) {
		if want != "" {
			if e, err := find(entries, want); err == nil {
				return nil, alreadyInstalled(e)
			}
		}
		var err error
		w, err = s.newWork()
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	defer w.close()

	fr := s.request(src, req.Progress)
	// Only the selected skills' files are fetched where the server allows
	// it (a partial fetch); Need below fetches any the hint missed.
	fr.Skills = req.selectors()
	if req.All || len(fr.Skills) == 0 {
		fr.Skills = []string{gitsrc.AllSkills}
	}
	snap, err := s.git().Fetch(ctx, fr)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	if req.RequireSigned && snap.Signer == "" {
		return nil, fmt.Errorf("%w: %s at %s; its signature was not checked or did not name an accepted key", ErrNotVerified, src.URL, gitsrc.Short(snap.Commit))
	}
	// Discovery reads the commit's tree; only the selected skills' folders
	// are written (stageFound).
	d, err := gitsrc.Discover(snap.FS, gitsrc.RepoName(src.URL))
	if err != nil {
		return nil, err
	}
	repoDir := w.path("repo")
	sels, err := d.Select(req.selectors(), req.All, src.Raw)
	if err != nil {
		return nil, err
	}
	if req.Name != "" && len(sels) > 1 {
		return nil, fmt.Errorf("--name renames one skill, but %d are selected; add them one at a time", len(sels))
	}
	if err := snap.Need(ctx, neededDirs(snap, sels)...); err != nil {
		return nil, err
	}
	// Every name is checked before anything is staged: a batch is not
	// half installed for a name that was never allowed.
	reviewed := make([]Reviewed, 0, len(sels))
	for _, sel := range sels {
		name := sel.Manifest.Name
		if req.Name != "" {
			name = req.Name
		}
		canonical, err := manifest.Canonical(name)
		if err != nil {
			return nil, err
		}
		if err := s.checkName(canonical); err != nil {
			how := "rename the skill in its SKILL.md, or add it under another name with --name"
			if req.Name != "" {
				how = "give --name another name"
			}
			where := ""
			if sel.Dir != "" && sel.Dir != "." {
				where = " (in " + sel.Dir + ")"
			}
			return nil, fmt.Errorf("%w%s; no installed skill takes a bundled name: %s", err, where, how)
		}
		reviewed = append(reviewed, Reviewed{Canonical: canonical, Path: sel.Dir, Manifest: sel.Manifest, Warnings: sel.Warnings, FS: skillFS(snap, sel.Dir)})
	}
	if req.Review != nil {
		if err := req.Review(reviewed); err != nil {
			return nil, err
		}
	}
	warnUncommitted(req, src, snap, sels)
	// Every selected skill is staged first, each in its own slot of w,
	// and then all are committed under one lock with one registry write:
	// a registry commit per skill rewrote (and fsynced) the whole registry
	// a thousand times for `add --all` of a thousand skills. A skill that
	// fails to stage ends the batch; the ones staged before it are still
	// installed and returned with its error, as one commit each would.
	batch, failed := s.stageAll(ctx, w, req, src, snap, repoDir, sels, prep)
	out, err := s.commitAdds(batch)
	if err != nil {
		return out, err
	}
	return out, failed
}

// FindSkills fetches src and returns what discovery finds there, and the
// commit it found it in (which tag, which version), installing nothing
// (`agent skill add --list`, dependency resolution).
func (s *Pipeline) FindSkills(ctx context.Context, src gitsrc.Source, progress io.Writer) (*gitsrc.Discovery, *gitsrc.Snapshot, error) {
	snap, err := s.git().Fetch(ctx, s.fetchRequest(src.URL, src.Ref, src.Constraint, progress))
	if err != nil {
		return nil, nil, fmt.Errorf("list skills in %s: %w", src.Raw, err)
	}
	d, err := gitsrc.Discover(snap.FS, gitsrc.RepoName(src.URL))
	if err != nil {
		return nil, nil, fmt.Errorf("list skills in %s: %w", src.Raw, err)
	}
	d.Detach()
	return d, snap, nil
}

// stageAll stages sels in order, each in slot i of w, and returns the
// ones staged before the first that failed, and its error. Without a
// plugin to build, the skills are staged on every core: writing, hashing
// and indexing one skill's files is independent of the others', and a
// serial loop left the second core idle for most of add --all. Their
// SKILL.md warnings still print in order, and prep (listing the scripts)
// runs one at a time, as it is the caller's.
func (s *Pipeline) stageAll(ctx context.Context, w *work, req AddRequest, src gitsrc.Source, snap *gitsrc.Snapshot, repoDir string, sels []gitsrc.Found, prep Prepare) ([]addition, error) {
	n := stageWorkers(sels)
	if n > 1 && prep != nil {
		var mu sync.Mutex
		inner := prep
		prep = func(ctx context.Context, st *Staged) error {
			mu.Lock()
			defer mu.Unlock()
			return inner(ctx, st)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	staged := make([]addition, len(sels))
	read := make([]bool, len(sels))
	errs := make([]error, len(sels))
	done := make([]chan struct{}, len(sels))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var failed atomic.Bool // the first failure ends the batch: stage no more
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		parallel.For(len(sels), n, func(i int) {
			if failed.Load() {
				errs[i] = errBatchEnded
			} else {
				staged[i], read[i], errs[i] = s.stageFound(ctx, w, i, req, src, snap, repoDir, sels[i], prep, n == 1)
			}
			if errs[i] != nil {
				failed.Store(true)
			}
			close(done[i])
		})
	}()
	// Nothing returns while a worker may still write into w; the ones
	// after a failure are cut short.
	defer func() { <-finished }()
	defer cancel()
	var batch []addition
	for i, sel := range sels {
		<-done[i]
		if read[i] && n > 1 {
			showWarnings(req, sel)
		}
		if errs[i] != nil {
			return batch, errs[i]
		}
		batch = append(batch, staged[i])
	}
	return batch, nil
}

// errBatchEnded is the lot of a skill after one that failed; stageAll
// never returns it.
var errBatchEnded = errors.New("an earlier skill failed")

func showWarnings(req AddRequest, sel gitsrc.Found) {
	if req.Warn == nil {
		return
	}
	for _, p := range sel.Warnings {
		req.Warn(p.String())
	}
}

// stageWorkers is how many skills of sels stageAll stages at once: one
// when a plugin is built (its build and describe print progress, in
// order, and may need the whole tree, CheckoutSkill) or when one selected
// folder holds another (staging the outer one moves the inner one's
// files); else one per core.
func stageWorkers(sels []gitsrc.Found) int {
	if len(sels) < 2 {
		return 1
	}
	dirs := make([]string, 0, len(sels))
	for _, sel := range sels {
		if sel.Manifest != nil && sel.Manifest.Plugin != nil {
			return 1
		}
		d := gitsrc.FSPath(sel.Dir)
		if d == "." {
			return 1
		}
		dirs = append(dirs, d+"/")
	}
	slices.Sort(dirs)
	for i := 1; i < len(dirs); i++ {
		if strings.HasPrefix(dirs[i], dirs[i-1]) {
			return 1
		}
	}
	return min(runtime.GOMAXPROCS(0), len(sels))
}

// addition is a skill staged for add: its entry and what to move into place.
type addition struct {
	entry Entry
	inst  installable
}

// stageFound writes one selected skill's folder of snap under repoDir and
// stages it in slot i of w. Once the skill is written and found
// compatible, its SKILL.md warnings are due (read), even if staging
// fails; warn shows them then, before prep prints its progress.
func (s *Pipeline) stageFound(ctx context.Context, w *work, i int, req AddRequest, src gitsrc.Source, snap *gitsrc.Snapshot, repoDir string, sel gitsrc.Found, prep Prepare, warn bool) (a addition, read bool, err error) {
	w = w.slot(i)
	m := sel.Manifest
	if err := gitsrc.CheckoutSkill(snap, sel.Dir, repoDir, m, s.Limits); err != nil {
		return addition{}, false, fmt.Errorf("read %s at %s: %w", src.Raw, gitsrc.Short(snap.Commit), err)
	}
	name := m.Name
	if req.Name != "" {
		name = req.Name
	}
	canonical, err := manifest.Canonical(name)
	if err != nil {
		return addition{}, false, err
	}
	if err := manifest.CheckCompatibility(m, req.AgentVersion); err != nil {
		return addition{}, false, err
	}
	if warn {
		showWarnings(req, sel)
	}
	sha := snap.PinOf(sel.Dir)
	version := snap.Version
	if version == "" {
		version = m.Version
	}
	st := &Staged{
		Canonical: canonical, Manifest: m, Warnings: sel.Warnings,
		RepoDir: repoDir, SkillDir: filepath.Join(repoDir, filepath.FromSlash(sel.Dir)),
		CommitSHA: sha, Version: version,
	}
	now := s.now()
	e := Entry{
		Name: name, Canonical: canonical, Trusted: req.Trusted || snap.Signer != "",
		Path: s.skillDir(canonical), Description: m.Description,
		Origin: Origin{Source: entrySource(src.Kind), URL: src.URL, Ref: src.Ref, Constraint: src.Constraint,
			Version: version, CommitSHA: sha, Subdir: sel.Dir, Signer: snap.Signer},
		History: History{InstalledAt: now, UpdatedAt: now},
	}
	inst, err := s.stage(ctx, w, st, prep, &e)
	if err != nil {
		return addition{}, true, err
	}
	return addition{entry: e, inst: inst}, true, nil
}

// commitAdd moves a staged skill into place and registers e.
func (s *Pipeline) commitAdd(e Entry, inst installable) error {
	_, err := s.commitAdds([]addition{{entry: e, inst: inst}})
	return err
}

// commitAdds moves staged skills into place, in order, and registers them
// with one registry write. A kill at any point leaves each either not
// installed or installed: recovery removes a folder whose entry was not
// written (its .add marker). The first skill that cannot be moved (already
// installed, its folder taken, a failed rename) ends the batch: the ones
// before it are installed and returned with its error; its own leftovers
// are recovered against the registry just written.
func (s *Pipeline) commitAdds(batch []addition) ([]Entry, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	var (
		done    []Entry
		markers []string
		failed  error
	)
	err := s.lockedThen(func(entries []Entry) ([]Entry, error) {
		next := append(make([]Entry, 0, len(entries)+len(batch)), entries...)
		done, markers = nil, nil
		failed = s.moveAdds(batch, &next, &done, &markers)
		if len(done) == 0 {
			return nil, failed
		}
		return next, nil
	}, func() {
		// A file each, independent of the others: on every core.
		parallel.For(len(done), 0, func(i int) {
			_ = os.Remove(markers[i])
			integrityRecords(s.Home).write(done[i].Canonical, batch[i].inst.record)
		})
		if failed != nil {
			// The failed skill's marker (and folder or plugin, if it
			// got that far): its entry was not written.
			if entries, err := s.read(); err == nil {
				recovery{s.Store}.run(entries)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return done, failed
}

// moveAdds does the moves of commitAdds under the lock, appending each
// moved skill's entry to next and done and its marker to markers (which
// may hold one more: the failed skill's).
func (s *Pipeline) moveAdds(batch []addition, next, done *[]Entry, markers *[]string) error {
	installed := make(map[string]int, len(*next))
	for i, e := range *next {
		installed[e.Canonical] = i
	}
	for _, a := range batch {
		e, inst := a.entry, a.inst
		if i, ok := installed[e.Canonical]; ok {
			return alreadyInstalled((*next)[i])
		}
		if _, err := os.Lstat(e.Path); err == nil {
			return fmt.Errorf("%s exists but is not in the registry; move it away and try again", e.Path)
		}
		marker := filepath.Join(s.tmpDir(), e.Canonical+".add."+e.CommitSHA)
		f, err := platform.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		*markers = append(*markers, marker)
		s.at("add:marked")
		if err := os.Rename(inst.skill, e.Path); err != nil {
			return err
		}
		s.at("add:moved")
		if err := inst.placePlugin(); err != nil {
			return err
		}
		s.at("add:plugin")
		installed[e.Canonical] = len(*next)
		*next = append(*next, e)
		*done = append(*done, e)
	}
	return nil
}

func alreadyInstalled(e Entry) error {
	return fmt.Errorf("%w: %s (from %s at %s); use agent skill update %s to move it forward, or agent skill remove %s first",
		ErrAlreadyInstalled, e.Canonical, e.URL, gitsrc.Short(e.CommitSHA), e.Canonical, e.Canonical)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// installable is a staged skill ready to be moved into place.
type installable struct {
	skill      string // staged copy of the skill folder
	pluginFrom string // built binary in the work dir, or ""
	pluginTo   string
	record     *integrityRecord // the staged folder's files, for state/integrity
}

// pluginFile names a built plugin binary: the skill's canonical name, with
// ".exe" on Windows, where a program is known by it. Each version gets a
// folder of its own (the commit, or dev- and the hash for a link), so an
// update never writes over a binary that may be running: Windows cannot
// replace a running .exe (and runs plugins from a private copy besides).
func pluginFile(canonical string) string {
	if runtime.GOOS == "windows" {
		return canonical + ".exe"
	}
	return canonical
}

func (in installable) placePlugin() error {
	if in.pluginFrom == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(in.pluginTo), 0o755); err != nil {
		return err
	}
	return os.Rename(in.pluginFrom, in.pluginTo)
}

// stage runs prep, moves the skill folder out of the checkout and fills
// e's plugin and tools with their installed locations. An untrusted
// skill's code never runs: prep (build and describe) is skipped for it
// until Trust. A folder with a symbolic link is refused before prep, and
// one prep left a link in is refused by the hash.
//
// st.SkillDir must be a throwaway checkout or copy in the run's work
// folder (every caller's is): it is moved, not copied, since copying
// wrote each file of the skill a second time.
func (s *Pipeline) stage(ctx context.Context, w *work, st *Staged, prep Prepare, e *Entry) (installable, error) {
	if err := CheckNoLinks(st.SkillDir); err != nil {
		return installable{}, err
	}
	st.PluginOut = filepath.Join(w.path("plugin"), pluginFile(st.Canonical))
	if prep != nil && e.Trusted {
		if err := os.MkdirAll(w.path("plugin"), 0o755); err != nil {
			return installable{}, err
		}
		if err := prep(ctx, st); err != nil {
			return installable{}, fmt.Errorf("prepare %s: %w", st.Canonical, err)
		}
	}
	in := installable{skill: w.path("skill")}
	if err := os.Rename(st.SkillDir, in.skill); err != nil {
		return installable{}, err
	}
	var err error
	if e.DirHash, in.record, err = HashSkill(in.skill); err != nil {
		return installable{}, fmt.Errorf("hash the files of %s: %w", st.Canonical, err)
	}
	// SKILL.md was just hashed with the rest: its sum is in the record.
	if f := in.record.Files[manifest.FindName(func(n string) bool { return in.record.Files[n] != nil })]; f != nil {
		e.ManifestSHA256 = f.SHA256
	} else if e.ManifestSHA256, err = manifestSHA256(in.skill); err != nil {
		return installable{}, fmt.Errorf("hash %s of %s: %w", manifest.ManifestFile, st.Canonical, err)
	}
	if e.Listing, err = NewListing(in.skill, st.Manifest, st.Warnings, st.Runnable); err != nil {
		return installable{}, fmt.Errorf("index %s: %w", st.Canonical, err)
	}
	e.Tools = st.Tools
	e.Plugin = nil
	if p := st.Plugin; p != nil {
		switch path := filepath.Clean(p.Path); {
		case path == filepath.Clean(st.PluginOut):
			if _, err := os.Stat(path); err != nil {
				return installable{}, fmt.Errorf("prepare %s: plugin binary missing: %w", st.Canonical, err)
			}
			in.pluginFrom = path
			in.pluginTo = filepath.Join(s.PluginsDir(), st.Canonical, st.CommitSHA, filepath.Base(path))
			e.Plugin = &Plugin{Path: in.pluginTo, SHA256: p.SHA256}
		case within(st.SkillDir, path):
			rel, _ := filepath.Rel(st.SkillDir, path)
			e.Plugin = &Plugin{Path: filepath.Join(e.Path, rel), SHA256: p.SHA256}
		default:
			return installable{}, fmt.Errorf("prepare %s: plugin path %s is neither Staged.PluginOut nor inside the skill", st.Canonical, p.Path)
		}
	}
	if err := ctx.Err(); err != nil {
		return installable{}, err
	}
	return in, nil
}

// warnUncommitted tells the author of a local repository that add installs
// the commit: edits not yet committed in a selected skill's folder are not
// in the install.
func warnUncommitted(req AddRequest, src gitsrc.Source, snap *gitsrc.Snapshot, sels []gitsrc.Found) {
	if req.Warn == nil {
		return
	}
	// Each folder is checked on its own core (git's index and the
	// ignore files are read once, for all); the warnings print in order.
	lists := make([][]string, len(sels))
	parallel.For(len(sels), 0, func(i int) { lists[i], _ = snap.Uncommitted(sels[i].Dir) })
	for i, sel := range sels {
		files := lists[i]
		if len(files) == 0 {
			continue
		}
		shown := files
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(files)-5))
		}
		folder := sel.Dir
		if folder == "" || folder == "." {
			folder = "the repository root"
		}
		req.Warn(fmt.Sprintf("%s has uncommitted changes in %s (%s): add installs commit %s as committed, without them; commit them and add again, or use the folder in place with 'agent skill link <dir>'",
			src.Raw, folder, strings.Join(shown, ", "), gitsrc.Short(snap.Commit)))
	}
}

// neededDirs are the folders of snap that installing sels writes: each
// skill's folder, or the whole tree for a plugin built from a module
// above its skill (CheckoutSkill).
func neededDirs(snap *gitsrc.Snapshot, sels []gitsrc.Found) []string {
	dirs := make([]string, 0, len(sels))
	for _, sel := range sels {
		if gitsrc.NeedsWholeTree(snap, sel.Dir, sel.Manifest) {
			return []string{"."}
		}
		dirs = append(dirs, sel.Dir)
	}
	return dirs
}
