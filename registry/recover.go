package registry

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentskills/agent/internal/ground/flock"
	"github.com/agentskills/agent/registry/manifest"
)

// Names inside skills/.tmp/ and what recovery does with them. recovery runs
// under the registry lock before every write and uses registry.json (the
// commit point) to roll each leftover back or forward:
//
//	work-*                    a run's staging area; its .owner file is flocked
//	                          while the run lives. Dead runs' areas are removed.
//	<c>.add.<sha>             add is moving skills/<c> into place;
//	<c>.rm.<sha>              remove is taking it away. Either way the folder
//	                          stays only if the registry has <c> at <sha>.
//	<c>.new.<sha>[.ino]       update staged <sha> and swapped it with
//	                          skills/<c> (the .ino file holds the staged
//	                          folder's inode, telling whether the swap
//	                          happened). Not committed: swap back.
//	<c>.old.<sha>             the old folder of an update on a file system
//	                          without RENAME_EXCHANGE. Not committed: put back.
//
// Errors are ignored: every writer retries recovery.
//
// recovery is a room of the store of its own (as the index is): it reads
// the core's folders and registry and rolls leftovers back or forward.
type recovery struct{ *Store }

func (s recovery) run(entries []Entry) {
	byName := make(map[string]Entry, len(entries))
	for _, e := range entries {
		byName[e.Canonical] = e
	}
	// Index temp files of a killed writer or reader (index.go).
	if stale, _ := filepath.Glob(filepath.Join(s.SkillsDir(), ".index.tmp-*")); len(stale) > 0 {
		for _, p := range stale {
			_ = os.Remove(p)
		}
	}
	ents, _ := os.ReadDir(s.tmpDir())
	for _, d := range ents {
		name := d.Name()
		p := filepath.Join(s.tmpDir(), name)
		if strings.HasPrefix(name, "work-") {
			if !workAlive(p) {
				_ = os.RemoveAll(p)
			}
			continue
		}
		c, rest, _ := strings.Cut(name, ".")
		kind, sha, _ := strings.Cut(rest, ".")
		if cc, err := manifest.Canonical(c); err != nil || cc != c {
			// Not ours (we only write canonical names): never let it
			// point recovery at skills/ itself.
			_ = os.RemoveAll(p)
			continue
		}
		e, installed := byName[c]
		atSHA := installed && e.CommitSHA == sha
		switch kind {
		case "add", "rm":
			if !atSHA {
				_ = os.RemoveAll(s.skillDir(c))
			}
			_ = os.Remove(p)
		case "new":
			if strings.HasSuffix(sha, ".ino") {
				if _, err := os.Lstat(strings.TrimSuffix(p, ".ino")); err != nil {
					_ = os.Remove(p) // its folder was handled already
				}
				continue
			}
			if !atSHA && swapped(p+".ino", s.skillDir(c)) {
				_ = swapWith(s.exchange, p, s.skillDir(c))
			}
			_ = os.RemoveAll(p)
			_ = os.Remove(p + ".ino")
		case "old":
			if atSHA {
				_ = os.RemoveAll(s.skillDir(c))
				_ = os.Rename(p, s.skillDir(c))
			}
			_ = os.RemoveAll(p)
		default:
			_ = os.RemoveAll(p)
		}
	}
	if tmps, _ := filepath.Glob(filepath.Join(s.SkillsDir(), ".registry.json.tmp-*")); len(tmps) > 0 {
		for _, t := range tmps {
			_ = os.Remove(t)
		}
	}
	s.plugins(byName)
}

// ifNeeded runs recovery for a reader when skills/.tmp holds
// anything but the staging areas of live runs: the leftovers of a killed
// writer. Between a killed update's folder swap and its registry write the
// folder holds the new version while the registry names the old one;
// without this, readers would see that mix until the next writer. Live
// writers keep such markers only while they hold the lock, so the reader
// waits for at most one commit. Any failure (a read-only AGENT_HOME, say)
// leaves the state to the next writer.
func (s recovery) ifNeeded() {
	ents, err := os.ReadDir(s.tmpDir())
	if err != nil || len(ents) == 0 {
		return
	}
	stale := false
	for _, d := range ents {
		if !strings.HasPrefix(d.Name(), "work-") || !workAlive(filepath.Join(s.tmpDir(), d.Name())) {
			stale = true
			break
		}
	}
	if !stale {
		return
	}
	unlock, err := lockRegistry(s.SkillsDir())
	if err != nil {
		return
	}
	defer unlock()
	if entries, err := s.read(); err == nil {
		s.run(entries)
	}
}

// swapped reports whether the folder at dir is the one whose inode was
// recorded in inoFile.
func swapped(inoFile, dir string) bool {
	b, err := os.ReadFile(inoFile)
	if err != nil {
		return false
	}
	want, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return false
	}
	got, ok := inode(dir)
	return ok && got == want
}

// plugins removes built plugins that no entry points at.
func (s recovery) plugins(byName map[string]Entry) {
	skills, _ := os.ReadDir(s.PluginsDir())
	for _, sd := range skills {
		if c, err := manifest.Canonical(sd.Name()); err != nil || c != sd.Name() {
			continue
		}
		cdir := filepath.Join(s.PluginsDir(), sd.Name())
		e, ok := byName[sd.Name()]
		if !ok {
			_ = os.RemoveAll(cdir)
			continue
		}
		shas, _ := os.ReadDir(cdir)
		for _, sh := range shas {
			d := filepath.Join(cdir, sh.Name())
			if e.Plugin == nil || !within(d, e.Plugin.Path) {
				_ = os.RemoveAll(d)
			}
		}
		_ = os.Remove(cdir) // only succeeds when empty
	}
}

// within reports whether p is inside dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && manifest.InsideRel(filepath.ToSlash(rel))
}

// work is a run's staging directory under skills/.tmp.
type work struct {
	dir   string
	owner *os.File
	// prefix starts the names of a slot's entries (slot).
	prefix string
}

// newWork creates a staging directory and holds a flock on its .owner file
// for as long as the run lives, so that recovery in another process can
// tell a live run from a killed one. Called under the registry lock.
func (s *Pipeline) newWork() (*work, error) {
	if err := os.MkdirAll(s.tmpDir(), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(s.tmpDir(), "work-")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".owner"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// Blocking: a reader probing whether the run is alive (workAlive,
	// outside the registry lock) may hold the lock for an instant.
	if err := flock.Lock(f); err != nil {
		f.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return &work{dir: dir, owner: f}, nil
}

func (w *work) path(name string) string { return filepath.Join(w.dir, w.prefix+name) }

// slot is w for the i-th of several skills staged at once: its names
// start with "i." (no folder is made for it: a mkdir per skill showed in
// the profile of add --all).
func (w *work) slot(i int) *work {
	return &work{dir: w.dir, owner: w.owner, prefix: w.prefix + strconv.Itoa(i) + "."}
}

// close removes the staging directory, then releases ownership.
func (w *work) close() {
	_ = os.RemoveAll(w.dir)
	_ = flock.Unlock(w.owner)
	w.owner.Close()
}

func workAlive(dir string) bool {
	f, err := os.Open(filepath.Join(dir, ".owner"))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := flock.TryLock(f); err != nil {
		return true
	}
	_ = flock.Unlock(f)
	return false
}
