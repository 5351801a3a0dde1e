package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentskills/agent/internal/ground/atomicfile"
)

// fingerprint identifies one version of a file without reading it. Every
// write to a file changes its ctime, which no user can set back, so an
// unchanged fingerprint means unchanged contents since the recorded full
// check.
type fingerprint struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
	// Settled marks a record taken under a read lease with a ctime older
	// than fingerprintSettle; only such records let a launch skip the hash.
	Settled bool `json:"settled"`
}

func statOf(f *os.File) (fingerprint, error) {
	fi, err := f.Stat()
	if err != nil {
		return fingerprint{}, err
	}
	fp, ok := sysStat(fi)
	if !ok {
		return fingerprint{}, errors.New("no stat data on this platform")
	}
	if !fi.Mode().IsRegular() {
		return fingerprint{}, fmt.Errorf("%s is not a regular file", f.Name())
	}
	fp.Size = fi.Size()
	return fp, nil
}

func (f fingerprint) sameFile(g fingerprint) bool {
	return f.Size == g.Size && f.Dev == g.Dev && f.Ino == g.Ino &&
		f.MtimeNs == g.MtimeNs && f.CtimeNs == g.CtimeNs
}

// parseFingerprint reads a stored record; anything odd is "no record",
// which only costs a full hash.
func parseFingerprint(b []byte) (fingerprint, error) {
	var fp fingerprint
	if err := json.Unmarshal(b, &fp); err != nil {
		return fingerprint{}, err
	}
	if fp.Path == "" || len(fp.SHA256) != sha256.Size*2 {
		return fingerprint{}, errors.New("incomplete fingerprint record")
	}
	if _, err := hex.DecodeString(fp.SHA256); err != nil {
		return fingerprint{}, err
	}
	return fp, nil
}

// verifier checks plugin binaries against their recorded sha256, keeping
// fingerprints in memory and, with a state dir, on disk for the next
// process.
type verifier struct {
	dir    string        // "" = memory only
	settle time.Duration // fingerprintSettle; tests shorten it

	mu  sync.Mutex
	mem map[string]fingerprint

	hashes atomic.Int64 // full hashes done; tests watch the fast path with it
}

func newVerifier(stateDir string) *verifier {
	v := &verifier{mem: map[string]fingerprint{}, settle: fingerprintSettle}
	if stateDir != "" {
		v.dir = filepath.Join(stateDir, "fingerprints")
	}
	return v
}

func (v *verifier) recordPath(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(v.dir, hex.EncodeToString(sum[:16])+".json")
}

func (v *verifier) lookup(path string) (fingerprint, bool) {
	v.mu.Lock()
	fp, ok := v.mem[path]
	v.mu.Unlock()
	if ok || v.dir == "" {
		return fp, ok
	}
	b, err := os.ReadFile(v.recordPath(path))
	if err != nil {
		return fingerprint{}, false
	}
	fp, err = parseFingerprint(b)
	if err != nil || fp.Path != path {
		return fingerprint{}, false
	}
	v.mu.Lock()
	v.mem[path] = fp
	v.mu.Unlock()
	return fp, true
}

func (v *verifier) store(fp fingerprint) {
	v.mu.Lock()
	v.mem[fp.Path] = fp
	v.mu.Unlock()
	if v.dir == "" {
		return
	}
	// Best effort: a missing record only means a full hash next time.
	if err := os.MkdirAll(v.dir, 0o700); err != nil {
		return
	}
	b, _ := json.Marshal(fp)
	_ = atomicfile.Write(v.recordPath(fp.Path), b, 0o600)
}

// fingerprintSettle is how old a file's ctime must be before its
// fingerprint is recorded. The kernel stamps ctime from a coarse clock, so a
// write in the same tick as the recorded one could leave ctime unchanged;
// a write after a settled record always gets a later ctime.
const fingerprintSettle = 2 * time.Second

// sealedBinary is a verified copy of a plugin binary that nobody can
// change any more: a sealed memfd on Linux. Elsewhere (and with the
// portable tag) it is a read-only file in a fresh folder only this user can
// open (seal_other.go), which code running as the same user could still
// rewrite. The host executes this copy,
// never the path, so the bytes that were checked are the bytes that run.
type sealedBinary struct {
	f      *os.File
	script bool // starts with "#!": its interpreter opens it by name
}

// exec returns the path that executes the copy and the files the child
// must inherit for it.
func (s *sealedBinary) exec() (string, []*os.File) {
	switch {
	case !sealedCopies:
		return s.f.Name(), nil
	case s.script:
		// The interpreter opens the script by the name the kernel gives
		// it, so the copy must still be open after exec: it becomes the
		// child's fd 3 (not close-on-exec) and the script's $0 is
		// /proc/self/fd/3.
		return "/proc/self/fd/3", []*os.File{s.f}
	}
	// Resolved by execve before close-on-exec descriptors close.
	return fmt.Sprintf("/proc/self/fd/%d", s.f.Fd()), nil
}

func (s *sealedBinary) close() {
	_ = s.f.Close()
	if !sealedCopies {
		_ = os.RemoveAll(filepath.Dir(s.f.Name()))
	}
}

// seal copies p's binary into a sealed in-memory file and proves that the
// copy is the binary the registry recorded. The bytes are hashed as they
// are copied, so a writer racing the check changes nothing that runs.
//
// The hash is skipped only when the fingerprint recorded at an earlier full
// check still matches and the kernel granted a read lease before the stat:
// the lease proves no one has the file open for writing (a writable
// mapping included) and holds off new writers until the copy is done, and
// every write since the recorded check would have moved ctime (see
// fingerprintSettle).
func (v *verifier) seal(p Plugin) (*sealedBinary, error) {
	f, err := os.Open(p.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: skill %q: plugin binary %s is missing", ErrStart, p.Name, p.Path)
		}
		return nil, fmt.Errorf("%w: skill %q: open plugin binary: %v", ErrStart, p.Name, err)
	}
	defer f.Close()
	release, leased := readLease(f)
	defer release()
	want := strings.ToLower(p.SHA256)
	before, err := statOf(f)
	if err != nil {
		return nil, fmt.Errorf("%w: skill %q: stat plugin binary: %v", ErrStart, p.Name, err)
	}
	rec, found := v.lookup(p.Path)
	fast := leased && found && rec.Settled && rec.SHA256 == want && rec.sameFile(before)
	dst, err := newSealable(filepath.Base(p.Path))
	if err != nil {
		return nil, fmt.Errorf("%w: skill %q: %v", ErrStart, p.Name, err)
	}
	s := &sealedBinary{f: dst}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	var h hash.Hash
	var n int64
	if fast {
		n, err = copyInto(dst, f, nil)
	} else {
		v.hashes.Add(1)
		h = sha256.New()
		n, err = copyInto(dst, f, h)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: skill %q: copy plugin binary: %v", ErrStart, p.Name, err)
	}
	after, err := statOf(f)
	if err != nil {
		return nil, fmt.Errorf("%w: skill %q: stat plugin binary: %v", ErrStart, p.Name, err)
	}
	unchanged := after.sameFile(before) && n == before.Size
	if fast && !unchanged {
		return nil, tampered(p, "it changed while being copied")
	}
	if !fast {
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return nil, tampered(p, fmt.Sprintf("its sha256 is %s, the registry recorded %s", got, want))
		}
		if leased && unchanged && time.Since(time.Unix(0, after.CtimeNs)) > v.settle {
			after.Path, after.SHA256, after.Settled = p.Path, want, true
			v.store(after)
		}
	}
	if s.f, err = seal(dst); err != nil {
		return nil, fmt.Errorf("%w: skill %q: %v", ErrStart, p.Name, err)
	}
	dst = s.f
	var magic [2]byte
	if m, _ := dst.ReadAt(magic[:], 0); m == 2 && magic == [2]byte{'#', '!'} {
		s.script = true
	}
	ok = true
	return s, nil
}

// checkExe proves that what the kernel is about to run as pid, stopped at
// exec, is p's recorded binary. The kernel refuses to exec a file that
// anyone has open for writing (a writable mapping included) and refuses
// new writers while it runs, so the file /proc/pid/exe names cannot change
// under us: an unchanged settled fingerprint proves it, else it is hashed.
// It runs on the thread that started the child, which may be sandboxed
// with it (internal/sandbox), so the record of a hash is written by
// commit, which the caller runs elsewhere once the child runs.
func (v *verifier) checkExe(p Plugin, pid int) (commit func(), err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return nil, fmt.Errorf("%w: skill %q: open the started plugin: %v", ErrStart, p.Name, err)
	}
	defer f.Close()
	fp, err := statOf(f)
	if err != nil {
		return nil, fmt.Errorf("%w: skill %q: stat the started plugin: %v", ErrStart, p.Name, err)
	}
	want := strings.ToLower(p.SHA256)
	if rec, found := v.lookup(p.Path); found && rec.Settled && rec.SHA256 == want && rec.sameFile(fp) {
		return nil, nil
	}
	v.hashes.Add(1)
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%w: skill %q: read the started plugin: %v", ErrStart, p.Name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return nil, tampered(p, fmt.Sprintf("its sha256 is %s, the registry recorded %s", got, want))
	}
	if time.Since(time.Unix(0, fp.CtimeNs)) > v.settle {
		fp.Path, fp.SHA256, fp.Settled = p.Path, want, true
		return func() { v.store(fp) }, nil
	}
	return nil, nil
}

func tampered(p Plugin, why string) error {
	// What to do about it is the CLI's to say (it knows the commands).
	return fmt.Errorf("%w: skill %q: plugin binary %s was modified after install (%s); refusing to run it",
		ErrTampered, p.Name, p.Path, why)
}

// RemoveFingerprints deletes the fingerprint records that the host keeps
// under stateDir (WithStateDir) for binaries inside any of the folders
// under, so that removing a skill leaves no record of its plugin. Records
// are a cache: an error leaves stale ones, never a wrong check.
func RemoveFingerprints(stateDir string, under ...string) error {
	dir := newVerifier(stateDir).dir
	if dir == "" {
		return nil
	}
	records, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range records {
		b, err := os.ReadFile(r)
		if err != nil {
			continue
		}
		fp, err := parseFingerprint(b)
		if err != nil {
			continue
		}
		for _, root := range under {
			if rel, err := filepath.Rel(root, fp.Path); err == nil && filepath.IsLocal(rel) {
				if err := os.Remove(r); err != nil && !errors.Is(err, os.ErrNotExist) {
					errs = append(errs, err)
				}
				break
			}
		}
	}
	return errors.Join(errs...)
}
