package registry

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/dirhash"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/internal/ground/copybuf"
	"github.com/agentskills/agent/internal/ground/platform"
)

// Whole-skill integrity (SPEC §5). At install, update and trust the skill
// folder's h1: hash (golang.org/x/mod/sumdb/dirhash, the hash of go.sum)
// is recorded in the entry (DirHash), and each file's sha256 in
// $AGENT_HOME/state/integrity/<canonical>.json, so that a changed skill can
// be refused at first use and the changed files named.
//
// The per-file record also caches a fingerprint of each file (size, inode,
// mtime and ctime in nanoseconds) taken when it was last hashed: a file
// whose fingerprint is unchanged is not read again. Anyone who writes a
// file changes its ctime. A fingerprint is recorded only for a file whose
// ctime is older than racyWindow when it was hashed, so a write within the
// same clock tick as the hash cannot hide behind an unchanged ctime.
//
// The record is a cache, not an authority: it is used only when the h1
// computed from its sums equals the entry's DirHash. registry.json stays
// the one place that says what a skill's files are.

// Sentinel errors of integrity checks.
var (
	// ErrTampered matches a skill whose files changed since it was installed.
	ErrTampered = errors.New("skill files changed since install")
	// ErrLink matches a skill folder holding a symbolic link (or a device,
	// socket or pipe): refused at install, and at run by the same check.
	ErrLink = errors.New("skill folder holds a symbolic link")
)

// pycache is left out of the hash: Python writes it next to scripts when
// run by hand. It is never installed, and it never runs: the exec plugin
// runs scripts with PYTHONPYCACHEPREFIX in a bytecode folder only it
// writes (plugins/exec/bytecode.go), so Python never reads a __pycache__
// beside them (SPEC §12).
const pycache = "__pycache__"

// racyWindow is how old a file's ctime must be, when it is hashed, for its
// fingerprint to be trusted later (see git's "racy git" problem).
const racyWindow = 2 * time.Second

// Changes is what differs between an installed skill folder and what was
// recorded at install. Paths are slash-separated, relative to the folder.
type Changes struct {
	Changed []string `json:"changed,omitempty"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Unnamed is set when the folder's hash differs but no per-file record
	// is left to say which files changed.
	Unnamed bool   `json:"unnamed,omitempty"`
	Got     string `json:"got,omitempty"`  // the folder's h1 hash now, when fully recomputed
	Want    string `json:"want,omitempty"` // the recorded h1 hash
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Changed) == 0 && len(c.Added) == 0 && len(c.Removed) == 0 && !c.Unnamed
}

// Files lists every changed path with what happened to it, sorted.
func (c Changes) Files() []string {
	var out []string
	for _, p := range c.Changed {
		out = append(out, p+" (changed)")
	}
	for _, p := range c.Added {
		out = append(out, p+" (added)")
	}
	for _, p := range c.Removed {
		out = append(out, p+" (removed)")
	}
	sort.Strings(out)
	return out
}

// TamperedError is a skill refused because its files changed.
type TamperedError struct {
	Skill   string
	Changes Changes
}

var _ error = (*TamperedError)(nil)

func (e *TamperedError) Error() string {
	what := "its files changed (the folder hash is " + e.Changes.Got + ", installed " + e.Changes.Want + ")"
	if files := e.Changes.Files(); len(files) > 0 {
		shown := files
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(files)-5))
		}
		what = strings.Join(shown, ", ")
	}
	return fmt.Sprintf("skill %s changed since it was installed: %s; it is not used. "+
		"See every change with 'agent skill verify %s'; discard them with 'agent skill remove %s --yes' and add it again, or 'agent skill update %s' once a new commit exists",
		e.Skill, what, e.Skill, e.Skill, e.Skill)
}

func (e *TamperedError) Unwrap() error { return ErrTampered }

// fileRecord is one file of an installed skill.
type fileRecord struct {
	SHA256 string `json:"sha256"`
	// Mode is the permission bits at install (0644, 0755): a chmod +x is a
	// change too (SPEC §12). 0 in records written before it: not compared.
	Mode uint32 `json:"mode,omitempty"`
	// The fingerprint at the last hash; zero when it must not be trusted.
	Size  int64  `json:"size,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Mtime int64  `json:"mtime_ns,omitempty"`
	Ctime int64  `json:"ctime_ns,omitempty"`
}

type fingerprint struct {
	Size  int64
	Ino   uint64
	Mtime int64
	Ctime int64
}

func (r fileRecord) fingerprint() fingerprint {
	return fingerprint{Size: r.Size, Ino: r.Ino, Mtime: r.Mtime, Ctime: r.Ctime}
}

func (r *fileRecord) setFingerprint(fp fingerprint, hashedAt time.Time) {
	if fp.Ctime >= hashedAt.Add(-racyWindow).UnixNano() {
		fp = fingerprint{}
	}
	r.Size, r.Ino, r.Mtime, r.Ctime = fp.Size, fp.Ino, fp.Mtime, fp.Ctime
}

func fingerprintOf(fi fs.FileInfo) fingerprint {
	st, ok := statOf(fi)
	if !ok {
		return fingerprint{}
	}
	return fingerprint{Size: fi.Size(), Ino: st.ino, Mtime: st.mtime, Ctime: st.ctime}
}

// integrityRecord is $AGENT_HOME/state/integrity/<canonical>.json.
type integrityRecord struct {
	DirHash string                 `json:"dir_hash"`
	Files   map[string]*fileRecord `json:"files"`
}

// h1 is the dirhash Hash1 of the recorded sums: the summary Hash1 hashes,
// rebuilt from sha256s instead of file contents (TestH1MatchesDirhash
// keeps the two equal).
func (r *integrityRecord) h1() string {
	names := make([]string, 0, len(r.Files))
	for n := range r.Files {
		names = append(names, n)
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%s  %s\n", r.Files[n].SHA256, n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// fileRecords are the per-file integrity records of one home, under
// $AGENT_HOME/state/integrity: a room of the store of its own, a cache that
// names what changed (Verify) and makes the first-use check cheap.
type fileRecords struct{ dir string }

// integrityRecords is the record room under home.
func integrityRecords(home string) fileRecords {
	return fileRecords{dir: filepath.Join(home, "state", "integrity")}
}

func (r fileRecords) path(canonical string) string {
	return filepath.Join(r.dir, canonical+".json")
}

// HashSkill computes the h1: hash of a skill folder and the record of its
// files. Symbolic links and other non-regular files are refused (SPEC §3:
// one rule at install and at run); __pycache__ folders are left out.
func HashSkill(dir string) (string, *integrityRecord, error) {
	return hashSkill(dir, time.Now())
}

// hashSkill is HashSkill with the time the hash is taken at, which decides
// which fingerprints are racy.
func hashSkill(dir string, now time.Time) (string, *integrityRecord, error) {
	names, bad, err := SkillFiles(dir)
	if err != nil {
		return "", nil, err
	}
	if len(bad) > 0 {
		return "", nil, fmt.Errorf("%s is not a regular file (a symbolic link, say); a skill holds only files and folders: replace it with the file", filepath.Join(dir, filepath.FromSlash(bad[0])))
	}
	rec := &integrityRecord{Files: make(map[string]*fileRecord, len(names))}
	h1, err := dirhash.Hash1(names, func(name string) (io.ReadCloser, error) {
		f, fi, err := openRegular(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return nil, err
		}
		r := &fileRecord{Mode: uint32(fi.Mode().Perm())}
		r.setFingerprint(fingerprintOf(fi), now)
		rec.Files[name] = r
		return &teeSum{f: f, h: sha256.New(), rec: r}, nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("hash %s: %w", dir, err)
	}
	rec.DirHash = h1
	return h1, rec, nil
}

// teeSum records the sha256 of what dirhash.Hash1 reads, so that one pass
// gives both the folder hash and each file's sum. It must not embed the
// *os.File: io.Copy would take the file's WriteTo, which reads past this
// Read. Its own WriteTo copies through a pooled buffer (copybuf), where
// io.Copy took a new 32 KiB one for every file.
type teeSum struct {
	f   *os.File
	h   hashWriter
	rec *fileRecord
}

type hashWriter interface {
	io.Writer
	Sum([]byte) []byte
}

func (t *teeSum) Read(p []byte) (int, error) {
	n, err := t.f.Read(p)
	t.h.Write(p[:n])
	return n, err
}

// WriteTo implements io.WriterTo, which io.Copy prefers to a buffer of
// its own; copybuf.Copy reads through Read.
func (t *teeSum) WriteTo(w io.Writer) (int64, error) { return copybuf.Copy(w, t) }

func (t *teeSum) Close() error {
	t.rec.SHA256 = hex.EncodeToString(t.h.Sum(nil))
	return t.f.Close()
}

// SkillFiles lists the files under dir (slash paths), leaving out
// __pycache__ folders; bad lists the entries that are neither a regular
// file nor a folder.
func SkillFiles(dir string) (names, bad []string, err error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a folder (symbolic links are not followed)", dir)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel := filepath.ToSlash(p[len(dir)+1:])
		switch t := d.Type(); {
		case d.IsDir():
			if d.Name() == pycache {
				return filepath.SkipDir
			}
		case t.IsRegular():
			names = append(names, rel)
		default:
			bad = append(bad, rel)
		}
		return nil
	})
	return names, bad, err
}

// CheckNoLinks refuses a skill folder that holds a symbolic link or any
// other entry that is not a file or a folder, naming the first one. Add
// and update call it before anything in the folder is built or run, so a
// plugin folder that links out of the repository is never built. .git at
// the top (a repository root) is not part of the skill.
func CheckNoLinks(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%w: %s is a symbolic link or not a folder; a skill folder must be a real folder", ErrLink, dir)
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir && d.Name() == ".git" && filepath.Dir(p) == dir {
			return filepath.SkipDir
		}
		if t := d.Type(); !t.IsDir() && !t.IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			what := "a special file"
			if t&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				what = "a symbolic link to " + target
				if joined := filepath.Join(filepath.Dir(rel), target); filepath.IsAbs(target) || !filepath.IsLocal(joined) {
					what += ", outside the skill"
				}
			}
			return fmt.Errorf("%w: %s is %s; a skill may hold no symbolic links, at install or at run: commit the real file or folder instead (nothing was built or run)", ErrLink, filepath.ToSlash(rel), what)
		}
		return nil
	})
}

// openRegular opens a regular file without following a link.
func openRegular(p string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|platform.NoFollow|platform.NonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", p)
	}
	return f, fi, nil
}

func fileSum(p string) (string, fingerprint, error) {
	f, fi, err := openRegular(p)
	if err != nil {
		return "", fingerprint{}, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fingerprint{}, err
	}
	return hex.EncodeToString(h.Sum(nil)), fingerprintOf(fi), nil
}

// Verify compares an installed skill's folder with what was recorded. With
// full set, every file is read again; otherwise files whose fingerprint is
// unchanged are taken as unchanged. Entries without a recorded hash
// (bundled skills, or installed by an older agent) have nothing to compare
// and come back empty with recorded false.
func (s *Store) Verify(e Entry, full bool) (c Changes, recorded bool, err error) {
	if e.DirHash == "" {
		return Changes{}, false, nil
	}
	c.Want = e.DirHash
	rec := integrityRecords(s.Home).read(e)
	if rec == nil || full {
		h1, fresh, err := hashSkill(e.Path, s.now())
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) && pe.Path == e.Path {
				return Changes{Unnamed: true, Want: e.DirHash, Got: "(folder missing)"}, true, nil
			}
			if rec == nil {
				return Changes{Unnamed: true, Want: e.DirHash, Got: "(" + err.Error() + ")"}, true, nil
			}
		} else {
			if h1 == e.DirHash && (rec == nil || sameModes(rec, fresh)) {
				if rec != nil {
					keepModes(fresh, rec)
				}
				integrityRecords(s.Home).write(e.Canonical, fresh)
				return Changes{}, true, nil
			}
			if rec == nil {
				return Changes{Unnamed: true, Want: e.DirHash, Got: h1}, true, nil
			}
		}
		c.Got = h1
		// Fall through with the recorded sums to name the files; a full
		// check reads every file.
		for _, r := range rec.Files {
			r.Size, r.Ino, r.Mtime, r.Ctime = 0, 0, 0, 0
		}
	}
	names, bad, err := SkillFiles(e.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Changes{Unnamed: true, Want: e.DirHash, Got: "(folder missing)"}, true, nil
		}
		return c, true, fmt.Errorf("verify %s: %w", e.Canonical, err)
	}
	dirty := false
	seen := make(map[string]bool, len(names)+len(bad))
	for _, n := range bad {
		seen[n] = true
		if _, ok := rec.Files[n]; ok {
			c.Changed = append(c.Changed, n)
		} else {
			c.Added = append(c.Added, n)
		}
	}
	for _, n := range names {
		seen[n] = true
		r, ok := rec.Files[n]
		if !ok {
			c.Added = append(c.Added, n)
			continue
		}
		p := filepath.Join(e.Path, filepath.FromSlash(n))
		if fi, err := os.Lstat(p); err == nil && r.Mode != 0 && uint32(fi.Mode().Perm()) != r.Mode {
			c.Changed = append(c.Changed, n)
			continue
		}
		if fp := r.fingerprint(); fp != (fingerprint{}) {
			if fi, err := os.Lstat(p); err == nil && fingerprintOf(fi) == fp {
				continue
			}
		}
		sum, fp, err := fileSum(p)
		if err != nil || sum != r.SHA256 {
			c.Changed = append(c.Changed, n)
			continue
		}
		if r.fingerprint() != fp {
			r.setFingerprint(fp, s.now())
			dirty = dirty || r.fingerprint() != fingerprint{}
		}
	}
	for n := range rec.Files {
		if !seen[n] {
			c.Removed = append(c.Removed, n)
		}
	}
	sort.Strings(c.Changed)
	sort.Strings(c.Added)
	sort.Strings(c.Removed)
	if dirty && c.Empty() {
		integrityRecords(s.Home).write(e.Canonical, rec)
	}
	return c, true, nil
}

// sameModes reports whether the files of now have the modes rec holds
// (where rec holds one).
func sameModes(rec, now *integrityRecord) bool {
	for n, r := range rec.Files {
		if f, ok := now.Files[n]; ok && r.Mode != 0 && f.Mode != r.Mode {
			return false
		}
	}
	return true
}

// keepModes leaves the recorded modes in a fresh record: a record
// written before modes were kept stays without them, rather than taking
// whatever the files hold now.
func keepModes(fresh, rec *integrityRecord) {
	for n, f := range fresh.Files {
		if r, ok := rec.Files[n]; ok {
			f.Mode = r.Mode
		}
	}
}

// CheckIntegrity is the first-use check: nil when the skill's files are
// as installed (or nothing was recorded), a *TamperedError otherwise.
func (s *Store) CheckIntegrity(e Entry) error {
	c, _, err := s.Verify(e, false)
	if err != nil {
		return err
	}
	if !c.Empty() {
		return &TamperedError{Skill: e.Canonical, Changes: c}
	}
	return nil
}

// RecordFolder hashes the skill folder dir and records its per-file sums
// under canonical, as add does for an installed folder; it returns the
// h1: hash. registry/trust records a trusted discovered folder with it.
func (s *Store) RecordFolder(canonical, dir string) (string, error) {
	h1, files, err := HashSkill(dir)
	if err != nil {
		return "", err
	}
	integrityRecords(s.Home).write(canonical, files)
	return h1, nil
}

// read loads the per-file record of e, or nil when it is missing,
// unreadable or does not add up to e.DirHash.
func (r fileRecords) read(e Entry) *integrityRecord {
	data, err := os.ReadFile(r.path(e.Canonical))
	if err != nil {
		return nil
	}
	var rec integrityRecord
	if json.Unmarshal(data, &rec) != nil || rec.DirHash != e.DirHash || rec.Files == nil {
		return nil
	}
	for _, r := range rec.Files {
		if r == nil {
			return nil
		}
	}
	if rec.h1() != e.DirHash {
		return nil
	}
	return &rec
}

// write replaces the per-file record (temp file and rename). It is a
// cache: a failure only costs a full hash at the next check.
func (r fileRecords) write(canonical string, rec *integrityRecord) {
	if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return
	}
	_ = atomicfile.Write(r.path(canonical), data, 0o600)
}
