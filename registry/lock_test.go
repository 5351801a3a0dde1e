package registry

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentskills/agent/internal/testutil/gittest"
)

const (
	sha1a = "0123456789abcdef0123456789abcdef01234567"
	h1a   = "h1:YnsGrJOq+faGTZ6zX4iaWTFE7XH6RscSrghmTkWhBMU="
)

func lockJSON(skills string) string {
	return `{"version": 1, "skills": [` + skills + `]}`
}

func lockEntryJSON(name, source string) string {
	return `{"name": "` + name + `", "source": "` + source + `", "commit": "` + sha1a + `", "hash": "` + h1a + `", "trusted": false}`
}

func TestParseLock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want error // nil: parses
		msg  string
	}{
		{"valid", lockJSON(lockEntryJSON("a", "https://example.com/a.git") + "," + lockEntryJSON("b", "/srv/b")), nil, ""},
		{"empty list", lockJSON(""), nil, ""},
		{"null", `null`, ErrLockCorrupt, `no "version"`},
		{"no skills", `{"version": 1}`, ErrLockCorrupt, `no "skills"`},
		{"newer format", `{"version": 3, "skills": []}`, ErrLockCorrupt, "upgrade agent"},
		{"requirers", strings.Replace(strings.Replace(lockJSON(lockEntryJSON("a", "/r")+","+lockEntryJSON("b", "/r")), `"version": 1`, `"version": 2`, 1), `"trusted": false}`, `"trusted": false, "requirers": ["b"]}`, 1), nil, ""},
		{"requirers in version 1", strings.Replace(lockJSON(lockEntryJSON("a", "/r")+","+lockEntryJSON("b", "/r")), `"trusted": false}`, `"trusted": false, "requirers": ["b"]}`, 1), ErrLockCorrupt, "format version 2"},
		{"requirer not locked", strings.Replace(strings.Replace(lockJSON(lockEntryJSON("a", "/r")), `"version": 1`, `"version": 2`, 1), `"trusted": false}`, `"trusted": false, "requirers": ["zz"]}`, 1), ErrLockCorrupt, "not another skill in the lock"},
		{"unknown field", `{"version": 1, "skills": [], "extra": 1}`, ErrLockCorrupt, "extra"},
		{"trailing data", lockJSON("") + `{}`, ErrLockCorrupt, "after the JSON"},
		{"short sha", strings.Replace(lockJSON(lockEntryJSON("a", "/r")), sha1a, "0123abcd", 1), ErrLockCorrupt, "full lower-case SHA-1"},
		{"upper-case sha", strings.Replace(lockJSON(lockEntryJSON("a", "/r")), sha1a, strings.ToUpper(sha1a), 1), ErrLockCorrupt, "SHA-1"},
		{"not h1", strings.Replace(lockJSON(lockEntryJSON("a", "/r")), h1a, "sha256:abc", 1), ErrLockCorrupt, "not an h1: hash"},
		{"bad name", lockJSON(lockEntryJSON("A B", "/r")), ErrLockCorrupt, "canonical"},
		{"command transport", lockJSON(lockEntryJSON("a", "ext::sh -c evil")), ErrLockCorrupt, "command transports"},
		{"path escapes", strings.Replace(lockJSON(lockEntryJSON("a", "/r")), `"commit"`, `"path": "../x", "commit"`, 1), ErrLockCorrupt, "inside the repository"},
		{"ref and constraint", strings.Replace(lockJSON(lockEntryJSON("a", "/r")), `"commit"`, `"ref": "main", "constraint": "^1", "commit"`, 1), ErrLockCorrupt, "both a ref"},
		{"same entry twice", lockJSON(lockEntryJSON("a", "/r") + "," + lockEntryJSON("a", "/r")), ErrLockCorrupt, "appears twice"},
		{"one name two sources", lockJSON(lockEntryJSON("a", "/r2") + "," + lockEntryJSON("a", "/r1")), ErrLockConflict, "two sources, /r1 and /r2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ParseLock([]byte(tt.in))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("ParseLock: %v", err)
				}
				if _, err := l.Marshal(); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("ParseLock = %v; want %v mentioning %q", err, tt.want, tt.msg)
			}
		})
	}
}

// lockedStore installs two skills of one repository (one at a tag, one on
// a branch) and returns the store, the lock and the repository.
func lockedStore(t *testing.T) (*Store, *Lock, *gittest.Repo) {
	t.Helper()
	repo := gittest.NewRepo(t, map[string]string{
		"one/SKILL.md": skillMD("one"), "one/f": "1",
		"two/SKILL.md": skillMD("two"), "two/f": "1",
	})
	repo.Tag(t, "v1.0.0")
	s := newStore(t)
	mustAdd(t, s, repo.FileURL()+"@v1.0.0", func(r *AddRequest) { r.Skill = "one" }, buildPrep)
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "two"; r.Trusted = false }, buildPrep)
	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLock(entries)
	if err != nil {
		t.Fatalf("NewLock: %v", err)
	}
	return s, l, repo
}

func TestLockIsStable(t *testing.T) {
	t.Parallel()
	s, l, _ := lockedStore(t)
	a, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// Touching the registry (a trust change and back) changes timestamps
	// there, never the lock.
	if _, err := s.SetTrusted("two", true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetTrusted("two", false); err != nil {
		t.Fatal(err)
	}
	entries, _ := s.List()
	l2, err := NewLock(entries)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := l2.Marshal()
	if !bytes.Equal(a, b) {
		t.Fatalf("lock changed on a no-op:\n%s\n%s", a, b)
	}
	for _, bad := range []string{"installed_at", "updated_at", "\t"} {
		if bytes.Contains(a, []byte(bad)) {
			t.Errorf("lock holds %q:\n%s", bad, a)
		}
	}
	back, err := ParseLock(a)
	if err != nil {
		t.Fatalf("ParseLock(Marshal): %v\n%s", err, a)
	}
	if !reflect.DeepEqual(back, l) {
		t.Errorf("round trip = %+v; want %+v", back, l)
	}
	if l.Skills[0].Name != "one" || l.Skills[0].Ref != "v1.0.0" || l.Skills[0].Path != "one" || !l.Skills[0].Trusted || l.Skills[1].Trusted {
		t.Errorf("lock = %+v", l.Skills)
	}
}

func syncLock(t *testing.T, s *Store, l *Lock, trust bool) ([]SyncChange, error) {
	t.Helper()
	return NewPipeline(s).Sync(context.Background(), l, SyncRequest{AgentVersion: "0.5.0", Trust: func([]string) (bool, error) { return trust, nil }}, buildPrep)
}

func TestSyncIntoFreshHome(t *testing.T) {
	t.Parallel()
	_, l, _ := lockedStore(t)
	s := newStore(t)
	done, err := syncLock(t, s, l, true)
	if err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if len(done) != 2 || done[0].Action != SyncAdd || done[1].Action != SyncAdd {
		t.Fatalf("Sync = %+v; want two adds", done)
	}
	entries := assertConsistent(t, s)
	if d := DiffLock(entries, l); len(d) != 0 {
		t.Fatalf("after sync DiffLock = %+v", d)
	}
	for _, e := range entries {
		if err := s.CheckIntegrity(e); err != nil {
			t.Errorf("CheckIntegrity(%s): %v", e.Canonical, err)
		}
		if le, _ := l.Find(e.Canonical); e.Trusted != le.Trusted || (e.Plugin != nil) != le.Trusted {
			t.Errorf("%s: trusted %v plugin %v; lock trusted %v", e.Canonical, e.Trusted, e.Plugin, le.Trusted)
		}
	}
	// A second sync has nothing to do.
	if done, err := syncLock(t, s, l, true); err != nil || len(done) != 0 {
		t.Fatalf("second Sync = %+v, %v", done, err)
	}
	// Without trust the lock's trusted skill is installed as files only.
	s2 := newStore(t)
	if _, err := syncLock(t, s2, l, false); err != nil {
		t.Fatal(err)
	}
	if e, _ := s2.Get("one"); e.Trusted || e.Plugin != nil {
		t.Errorf("untrusted sync: %+v", e)
	}
}

func TestSyncMovesRemovesAndRefuses(t *testing.T) {
	t.Parallel()
	_, l, repo := lockedStore(t)
	s := newStore(t)
	// This machine is elsewhere: "two" at a newer commit, an extra skill.
	repo.Commit(t, map[string]string{"two/f": "2", "three/SKILL.md": skillMD("three")}, "2")
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "two" }, buildPrep)
	mustAdd(t, s, repo.FileURL(), func(r *AddRequest) { r.Skill = "three" }, buildPrep)
	entries, _ := s.List()
	d := DiffLock(entries, l)
	var acts []string
	for _, c := range d {
		acts = append(acts, c.Name+":"+c.Action)
	}
	if got := strings.Join(acts, " "); got != "one:add three:remove two:move" {
		t.Fatalf("DiffLock = %s", got)
	}
	if _, err := syncLock(t, s, l, true); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	entries = assertConsistent(t, s)
	if d := DiffLock(entries, l); len(d) != 0 {
		t.Fatalf("after sync DiffLock = %+v", d)
	}
	two, _ := s.Get("two")
	if !two.Trusted || two.PreviousSHA == "" || two.PreviousSHA == two.CommitSHA {
		t.Errorf("moved skill keeps local trust and records previous: %+v", two)
	}

	// A lock whose hash differs from the commit's folder is refused before
	// anything of it is installed, naming the skill and both hashes.
	bad := *l
	bad.Skills = append([]LockEntry{}, l.Skills...)
	bad.Skills[0].Hash = h1a
	fresh := newStore(t)
	_, err := syncLock(t, fresh, &bad, true)
	if !errors.Is(err, ErrHashMismatch) || !strings.Contains(err.Error(), "one") || !strings.Contains(err.Error(), h1a) || !strings.Contains(err.Error(), l.Skills[0].Hash) {
		t.Fatalf("Sync with a wrong hash = %v; want ErrHashMismatch naming one, %s and %s", err, h1a, l.Skills[0].Hash)
	}
	if _, err := fresh.Get("one"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the refused skill was installed: %v", err)
	}
	assertConsistent(t, fresh)

	// One name from another source is a conflict: nothing changes.
	other := gittest.NewRepo(t, map[string]string{"one/SKILL.md": skillMD("one")})
	s3 := newStore(t)
	mustAdd(t, s3, other.FileURL(), func(r *AddRequest) { r.Skill = "one" }, buildPrep)
	before := tree(t, s3.Home)
	_, err = syncLock(t, s3, l, true)
	if !errors.Is(err, ErrLockConflict) || !strings.Contains(err.Error(), other.FileURL()) {
		t.Fatalf("Sync over another source = %v; want ErrLockConflict naming %s", err, other.FileURL())
	}
	if after := tree(t, s3.Home); !reflect.DeepEqual(before, after) {
		t.Errorf("a refused sync changed AGENT_HOME")
	}
}

func TestSyncFetchesTheLockedCommitOverHTTP(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("tagged"), "f": "1"})
	repo.Tag(t, "v1.0.0")
	url := gittest.ServeRepo(t, repo)
	s := newStore(t)
	e := mustAdd(t, s, url+"@v1.0.0", nil, buildPrep)
	entries, _ := s.List()
	l, err := NewLock(entries)
	if err != nil {
		t.Fatal(err)
	}
	// Move the tag to a new commit: sync still installs the locked one.
	repo.Commit(t, map[string]string{"f": "moved"}, "moved")
	if err := repo.Git().DeleteTag("v1.0.0"); err != nil {
		t.Fatal(err)
	}
	repo.Tag(t, "v1.0.0")
	fresh := newStore(t)
	if _, err := syncLock(t, fresh, l, true); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	got, err := fresh.Get("tagged")
	if err != nil {
		t.Fatal(err)
	}
	if got.CommitSHA != e.CommitSHA || got.DirHash != e.DirHash {
		t.Fatalf("synced %s %s; want locked %s %s", got.CommitSHA, got.DirHash, e.CommitSHA, e.DirHash)
	}
	if b, _ := os.ReadFile(got.Path + "/f"); string(b) != "1" {
		t.Errorf("installed f = %q; want the locked content", b)
	}
}

func TestRollback(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"SKILL.md": skillMD("r"), "f": "1"})
	s := newStore(t)
	v1 := mustAdd(t, s, repo.FileURL(), nil, buildPrep)
	ctx := context.Background()
	if _, err := NewPipeline(s).Rollback(ctx, RollbackRequest{Name: "r"}, buildPrep); !errors.Is(err, ErrNoPrevious) {
		t.Fatalf("Rollback of a fresh skill = %v; want ErrNoPrevious", err)
	}
	repo.Commit(t, map[string]string{"f": "2"}, "2")
	update(t, s, UpdateRequest{Names: []string{"r"}})
	v2, _ := s.Get("r")
	if v2.PreviousSHA != v1.CommitSHA || v2.PreviousDirHash != v1.DirHash {
		t.Fatalf("after update previous = %s %s; want %s %s", v2.PreviousSHA, v2.PreviousDirHash, v1.CommitSHA, v1.DirHash)
	}
	for i, want := range []Entry{v1, v2, v1} {
		p, err := NewPipeline(s).Rollback(ctx, RollbackRequest{Name: "r", AgentVersion: "0.5.0"}, buildPrep)
		if err != nil {
			t.Fatalf("rollback %d: %v", i, err)
		}
		got, _ := s.Get("r")
		if p.NewSHA != want.CommitSHA || got.CommitSHA != want.CommitSHA || got.DirHash != want.DirHash || got.Plugin == nil || got.Plugin.SHA256 != want.Plugin.SHA256 {
			t.Fatalf("rollback %d: at %s %s plugin %+v; want %s %s plugin %+v", i, got.CommitSHA, got.DirHash, got.Plugin, want.CommitSHA, want.DirHash, want.Plugin)
		}
		if err := s.CheckIntegrity(got); err != nil {
			t.Fatalf("rollback %d: %v", i, err)
		}
		assertConsistent(t, s)
	}
	// A previous commit whose folder no longer hashes as recorded is refused.
	e, _ := s.Get("r")
	if err := s.Edit(func(entries []Entry) ([]Entry, error) {
		e.PreviousDirHash = h1a
		return replace(entries, e), nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPipeline(s).Rollback(ctx, RollbackRequest{Name: "r"}, buildPrep); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("Rollback to a changed folder = %v; want ErrHashMismatch", err)
	}
}

func FuzzParseLock(f *testing.F) {
	f.Add([]byte(lockJSON(lockEntryJSON("a", "https://example.com/a.git"))))
	f.Add([]byte(lockJSON(lockEntryJSON("a", "/r") + "," + lockEntryJSON("a", "/s"))))
	f.Add([]byte(`{"version":1,"skills":[{"name":"x","source":"git@h:o/r","path":"a/b","ref":"main","commit":"` + sha1a + `","hash":"` + h1a + `","plugin":"./p","trusted":true}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLock(data)
		if err != nil {
			return
		}
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed lock: %v", err)
		}
		back, err := ParseLock(out)
		if err != nil {
			t.Fatalf("a marshalled lock does not parse: %v\n%s", err, out)
		}
		again, _ := back.Marshal()
		if !bytes.Equal(out, again) {
			t.Fatalf("Marshal is not stable:\n%s\n%s", out, again)
		}
	})
}

// Linked (dev) skills are the user's own folders: sync neither removes
// them nor replaces one that has a locked name.
func TestSyncLeavesLinkedSkills(t *testing.T) {
	t.Parallel()
	_, l, _ := lockedStore(t)
	s := newStore(t)
	ctx := context.Background()
	for _, name := range []string{"one", "mine"} {
		dir := filepath.Join(t.TempDir(), name)
		writeFiles(t, dir, map[string]string{"SKILL.md": skillMD(name)})
		if _, err := NewPipeline(s).Link(ctx, LinkRequest{Dir: dir}, buildPrep); err != nil {
			t.Fatal(err)
		}
	}
	_, err := syncLock(t, s, l, true)
	if !errors.Is(err, ErrLockConflict) || !strings.Contains(err.Error(), "linked folder") {
		t.Fatalf("Sync over a linked skill = %v; want ErrLockConflict naming the linked folder", err)
	}
	if _, err := NewPipeline(s).Rollback(ctx, RollbackRequest{Name: "mine"}, buildPrep); !errors.Is(err, ErrLinked) {
		t.Fatalf("Rollback of a linked skill = %v; want ErrLinked", err)
	}
	if _, err := s.Remove(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := syncLock(t, s, l, true); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	if e, err := s.Get("mine"); err != nil || e.Source != SourceDev {
		t.Fatalf("the linked skill after sync: %+v, %v", e, err)
	}
	entries, _ := s.List()
	if d := DiffLock(entries, l); len(d) != 0 {
		t.Fatalf("DiffLock = %+v", d)
	}
}

// TestSyncTrustFollowsContent retargets a trusted skill's lock entry to a
// commit on an unmerged branch of the same source (with that commit's own
// hash, as whoever edits the lock would write it) and syncs it with no
// terminal and no --trust: it is installed untrusted, its plugin not
// built, and Untrusted names it. Content this home trusted keeps or gets
// back its trust without asking; --trust, or untrust in between, decide
// otherwise.
func TestSyncTrustFollowsContent(t *testing.T) {
	t.Parallel()
	repo := gittest.NewRepo(t, map[string]string{"one/SKILL.md": skillMD("one"), "one/f": "reviewed"})
	repo.Tag(t, "v1.0.0")
	repo.Branch(t, "unmerged")
	repo.Commit(t, map[string]string{"one/f": "not reviewed"}, "unmerged")
	s := newStore(t)
	mustAdd(t, s, repo.FileURL()+"@v1.0.0", nil, buildPrep)
	trusted := lockOf(t, s)
	// The retargeted entry: what a lock made elsewhere at the branch says.
	other := newStore(t)
	mustAdd(t, other, repo.FileURL()+"@unmerged", nil, buildPrep)
	retargeted := lockOf(t, other)
	if trusted.Skills[0].Commit == retargeted.Skills[0].Commit || !retargeted.Skills[0].Trusted {
		t.Fatalf("locks: %+v %+v", trusted.Skills, retargeted.Skills)
	}
	noHash := func(l *Lock) *Lock {
		c := *l
		c.Skills = append([]LockEntry{}, l.Skills...)
		c.Skills[0].Hash = ""
		return &c
	}

	type step struct {
		lock        *Lock
		trust       *bool // the answer; nil is no terminal and no --trust
		untrustArg  bool  // agent skill untrust one first
		wantTrusted bool
		wantAsked   bool
	}
	yes := true
	tests := []struct {
		name  string
		steps []step
	}{
		{"retargeted, then back to the trusted commit", []step{
			{lock: retargeted, wantAsked: true},
			{lock: trusted, wantTrusted: true},
		}},
		{"retargeted with --trust", []step{
			{lock: retargeted, trust: &yes, wantAsked: true, wantTrusted: true},
			{lock: trusted, wantTrusted: true},
			{lock: retargeted, wantTrusted: true},
		}},
		// Without a hash the question comes first; the answer is the
		// fetched folder's hash all the same.
		{"no hash in the lock", []step{
			{lock: noHash(retargeted), wantAsked: true},
			{lock: noHash(trusted), wantAsked: true, wantTrusted: true},
		}},
		{"untrusted in between", []step{
			{lock: retargeted, wantAsked: true},
			{lock: trusted, untrustArg: true, wantAsked: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			if _, err := syncLock(t, s, trusted, true); err != nil {
				t.Fatal(err)
			}
			for i, st := range tc.steps {
				if st.untrustArg {
					if _, err := s.SetTrusted("one", false); err != nil {
						t.Fatal(err)
					}
				}
				var asked, untrusted []string
				req := SyncRequest{AgentVersion: "0.5.0", Untrusted: func(c SyncChange) { untrusted = append(untrusted, c.Name) }}
				if st.trust != nil {
					req.Trust = func(names []string) (bool, error) { asked = names; return *st.trust, nil }
				} else {
					req.Trust = func(names []string) (bool, error) { asked = names; return false, nil }
				}
				if _, err := NewPipeline(s).Sync(context.Background(), st.lock, req, buildPrep); err != nil {
					t.Fatalf("step %d: Sync: %v", i, err)
				}
				e, err := s.Get("one")
				if err != nil {
					t.Fatal(err)
				}
				if e.CommitSHA != st.lock.Skills[0].Commit {
					t.Fatalf("step %d: at %s, want %s", i, e.CommitSHA, st.lock.Skills[0].Commit)
				}
				if e.Trusted != st.wantTrusted || (e.Plugin != nil) != st.wantTrusted {
					t.Errorf("step %d: trusted %v plugin %v; want trusted %v", i, e.Trusted, e.Plugin, st.wantTrusted)
				}
				if (len(asked) > 0) != st.wantAsked {
					t.Errorf("step %d: asked about %v; want asked %v", i, asked, st.wantAsked)
				}
				if wantUntrusted := st.wantAsked && !st.wantTrusted; (len(untrusted) > 0) != wantUntrusted {
					t.Errorf("step %d: told untrusted %v; want %v", i, untrusted, wantUntrusted)
				}
			}
		})
	}
}

func lockOf(t *testing.T, s *Store) *Lock {
	t.Helper()
	entries, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLock(entries)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
