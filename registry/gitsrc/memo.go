package gitsrc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/agentskills/agent/internal/ground/platform"
)

// Bounds of a snapshot's memo: a skill's files are small, and a hostile
// repository's large blobs are read from the store each time instead.
const (
	memoObject = 256 << 10 // bytes of one object kept
	memoTotal  = 32 << 20  // bytes kept in all
)

// memo is an object store that keeps the small objects read through it
// in memory for the life of one snapshot. go-git opens a loose object's
// file before it looks in its own cache, so every lookup cost an open
// and a few stats, and `add --all` reads each blob of a skill three times
// (discovery, the audit, the checkout) and each tree more often.
type memo struct {
	storer.EncodedObjectStorer
	// loose is a local repository's objects folder, whose loose objects
	// are read straight from their files (readLoose); "" for other
	// stores (diskStore.loose).
	loose string

	mu   sync.Mutex
	objs map[plumbing.Hash]plumbing.EncodedObject
	kept int64
}

// EncodedObject implements storer.EncodedObjectStorer.
func (m *memo) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	m.mu.Lock()
	o, ok := m.objs[h]
	m.mu.Unlock()
	if ok {
		if t != plumbing.AnyObject && o.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return o, nil
	}
	if mo := m.readLoose(h); mo != nil {
		if t != plumbing.AnyObject && mo.Type() != t {
			return nil, plumbing.ErrObjectNotFound
		}
		return m.keep(h, mo), nil
	}
	o, err := m.EncodedObjectStorer.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	if o.Size() > memoObject {
		return o, nil
	}
	// What is kept is held in memory, so that its readers share nothing:
	// an object of a pack is otherwise read from the pack file again at
	// every open (the fetched cache of an http or git:// source).
	mo, ok := o.(*plumbing.MemoryObject)
	if !ok {
		if mo, err = inMemory(o); err != nil {
			return nil, err
		}
	}
	return m.keep(h, mo), nil
}

// keep adds mo to the memo while it has room, and returns it.
func (m *memo) keep(h plumbing.Hash, mo *plumbing.MemoryObject) *plumbing.MemoryObject {
	m.mu.Lock()
	if m.kept+mo.Size() <= memoTotal {
		m.objs[h] = mo
		m.kept += mo.Size()
	}
	m.mu.Unlock()
	return mo
}

// readLoose reads h whole from its loose object file, or returns nil
// where the store must answer: a packed, missing, damaged or large
// object (go-git streams those, and says what is wrong). go-git's own
// path to a loose object took 2.5 times as long: it looks in the packs
// first, opens the file through the poller and keeps a second copy in
// its object cache (a scratch benchmark of 2,000 objects: 63–93 ms
// against 26–36 ms). It uses go-git's own decoder (objfile).
func (m *memo) readLoose(h plumbing.Hash) *plumbing.MemoryObject {
	if m.loose == "" {
		return nil
	}
	hex := h.String()
	f, err := platform.OpenFile(filepath.Join(m.loose, hex[:2], hex[2:]), os.O_RDONLY, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return nil
	}
	defer r.Close()
	t, size, err := r.Header()
	if err != nil || size > memoObject {
		return nil
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(t)
	if _, err := io.CopyN(mo, r, size); err != nil {
		return nil
	}
	if n, _ := r.Read(make([]byte, 1)); n != 0 {
		return nil // longer than its header says
	}
	return mo
}

// inMemory reads o whole.
func inMemory(o plumbing.EncodedObject) (*plumbing.MemoryObject, error) {
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	mo := &plumbing.MemoryObject{}
	mo.SetType(o.Type())
	if _, err := io.CopyN(mo, r, o.Size()+1); err != nil && err != io.EOF {
		return nil, err
	}
	if mo.Size() != o.Size() {
		return nil, fmt.Errorf("object %s: read %d bytes, its header says %d", o.Hash(), mo.Size(), o.Size())
	}
	return mo, nil
}

// memoTree is the tree of commit c of repo, read through a memo: every
// folder and file reached from it is read through the memo too.
func memoTree(repo *git.Repository, c *object.Commit) (*object.Tree, error) {
	m := &memo{EncodedObjectStorer: repo.Storer, objs: map[plumbing.Hash]plumbing.EncodedObject{}}
	if d, ok := repo.Storer.(*diskStore); ok {
		m.loose = d.loose
	}
	return object.GetTree(m, c.TreeHash)
}
