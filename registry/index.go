package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
	"unsafe"
)

// The registry index, skills/.index, is registry.json in a form that
// decodes in well under a millisecond per thousand skills: every command
// reads it instead of decoding registry.json with encoding/json (about
// 50 ms for 1,000 skills on the project's machine). registry.json stays
// the record (the commit point, what people read and the lock file
// exports); the index is derived from it and is used only while it names
// the exact registry.json it was made from (its stamp: device, inode,
// size, modification and change times). A hand-edited registry.json, a
// kill between the two writes or a damaged index therefore only costs one
// slow read, after which the reader writes a fresh index.
//
// Each record also keeps the entry's registry.json line, so that a writer
// that changes one entry re-encodes only that one (registry.json holds one
// compact entry per line; see writeRegistry).
//
// Layout: magic, stamp (5 uvarints), count, then per entry the binary
// record and the JSON line (each uvarint-length-prefixed), then the CRC-32C
// of everything before it.

const indexMagic = "agent-registry-index 4\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *Store) indexPath() string { return filepath.Join(s.SkillsDir(), ".index") }

// stamp identifies one version of registry.json: writers replace it by
// rename, so any change gives a new inode or times.
type stamp [5]uint64

func statStamp(p string) (stamp, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return stamp{}, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	return stamp{uint64(st.Dev), st.Ino, uint64(st.Size), uint64(st.Mtim.Nano()), uint64(st.Ctim.Nano())}, nil
}

// indexed is one entry as the index holds it.
type indexed struct {
	rec  []byte // binary record
	line []byte // registry.json line (compact JSON, no trailing comma)
}

// readIndex returns the entries of the index if it was made from the
// registry.json with stamp st.
func (s *Store) readIndex(st stamp) ([]Entry, []indexed, bool) {
	data, err := os.ReadFile(s.indexPath())
	if err != nil {
		return nil, nil, false
	}
	return decodeIndex(data, st)
}

func decodeIndex(data []byte, st stamp) (entries []Entry, lines []indexed, ok bool) {
	defer func() {
		if recover() != nil { // a damaged index is only a slow read
			entries, lines, ok = nil, nil, false
		}
	}()
	if len(data) < len(indexMagic)+4 || string(data[:len(indexMagic)]) != indexMagic {
		return nil, nil, false
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return nil, nil, false
	}
	d := &dec{b: body, s: unsafe.String(&body[0], len(body)), off: len(indexMagic)}
	for i := range st {
		if d.uvarint() != st[i] {
			return nil, nil, false
		}
	}
	n := d.uvarint()
	if n > uint64(len(body)) {
		return nil, nil, false
	}
	entries = make([]Entry, 0, n)
	lines = make([]indexed, 0, n)
	for i := uint64(0); i < n; i++ {
		i, j := d.take(d.uvarint())
		line := d.bytes()
		if d.err {
			return nil, nil, false
		}
		rec := d.b[i:j:j]
		rd := &dec{b: rec, s: d.s[i:j]}
		e := rd.entry()
		if rd.err || rd.off != len(rec) {
			return nil, nil, false
		}
		entries = append(entries, e)
		lines = append(lines, indexed{rec: rec, line: line})
	}
	if d.off != len(body) {
		return nil, nil, false
	}
	return entries, lines, true
}

// writeIndex writes the index of the registry.json with stamp st. It is
// not fsynced: after a crash a stale or torn index fails its stamp or CRC
// check, and registry.json, which is fsynced, is read instead.
func (s *Store) writeIndex(st stamp, recs []indexed) error {
	size := len(indexMagic) + 64
	for _, r := range recs {
		size += len(r.rec) + len(r.line) + 20
	}
	b := make([]byte, 0, size)
	b = append(b, indexMagic...)
	for _, v := range st {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r.rec)))
		b = append(b, r.rec...)
		b = binary.AppendUvarint(b, uint64(len(r.line)))
		b = append(b, r.line...)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	f, err := os.CreateTemp(s.SkillsDir(), ".index.tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, s.indexPath())
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// records encodes entries for the index, reusing the registry.json line
// of every entry that is unchanged since prev was read.
func records(entries []Entry, known known) ([]indexed, error) {
	prev := make(map[string]indexed, len(known.entries))
	for i := range known.entries {
		prev[known.entries[i].Canonical] = known.recs[i]
	}
	out := make([]indexed, len(entries))
	var e enc
	for i := range entries {
		e.b = nil
		e.entry(&entries[i])
		out[i].rec = e.b
		if p, ok := prev[entries[i].Canonical]; ok && bytes.Equal(p.rec, e.b) {
			out[i].line = p.line
			continue
		}
		line, err := json.Marshal(&entries[i])
		if err != nil {
			return nil, err
		}
		out[i].line = line
	}
	return out, nil
}

// registryJSON is registry.json with one compact entry per line: valid
// JSON that people can read and diff, built from the lines alone.
func registryJSON(recs []indexed) []byte {
	size := 64
	for _, r := range recs {
		size += len(r.line) + 6
	}
	b := make([]byte, 0, size)
	b = append(b, "{\n  \"version\": "...)
	b = append(b, byte('0'+registryVersion))
	b = append(b, ",\n  \"skills\": ["...)
	for i, r := range recs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = append(b, r.line...)
	}
	if len(recs) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "]\n}\n"...)
	return b
}

var errIndex = errors.New("bad index record")

// enc and dec are the binary record codec. Strings are length-prefixed;
// a nil slice or pointer is 0, a present one is its length + 1 (or 1).
type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *enc) strs(ss []string) {
	if ss == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(ss)) + 1)
	for _, s := range ss {
		e.str(s)
	}
}

func (e *enc) raw(b []byte) {
	if b == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(b)) + 1)
	e.b = append(e.b, b...)
}

// time keeps the instant and the zone offset (registry times are UTC).
func (e *enc) time(t time.Time) {
	if t.IsZero() {
		e.b = append(e.b, 0)
		return
	}
	_, off := t.Zone()
	if t.Location() == time.UTC {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 2)
		e.b = binary.AppendVarint(e.b, int64(off))
	}
	e.b = binary.AppendVarint(e.b, t.UnixNano())
}

func (e *enc) entry(x *Entry) {
	e.str(x.Name)
	e.str(x.Canonical)
	e.str(x.Source)
	e.str(x.GitURL)
	e.str(x.Ref)
	e.str(x.Constraint)
	e.str(x.Version)
	e.str(x.CommitSHA)
	e.bool(x.Trusted)
	e.time(x.InstalledAt)
	e.time(x.UpdatedAt)
	e.str(x.Path)
	e.str(x.Subdir)
	e.str(x.Description)
	if x.Plugin == nil {
		e.bool(false)
	} else {
		e.bool(true)
		e.str(x.Plugin.Path)
		e.str(x.Plugin.SHA256)
	}
	e.str(x.ManifestSHA256)
	e.str(x.DirHash)
	if x.Tools == nil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(len(x.Tools)) + 1)
		for _, t := range x.Tools {
			e.str(t.Name)
			e.str(t.Description)
			e.raw(t.InputSchema)
		}
	}
	e.str(x.PreviousSHA)
	e.str(x.Stamp)
	e.str(x.PreviousDirHash)
	e.bool(x.NamedOnly)
	l := x.Listing
	if l == nil {
		e.bool(false)
		return
	}
	e.bool(true)
	e.str(l.Fingerprint)
	e.str(l.MinAgentVersion)
	e.str(l.MaxAgentVersion)
	e.str(l.AgentVersion)
	if l.Plugin == nil {
		e.bool(false)
	} else {
		e.bool(true)
		e.str(l.Plugin.Build)
		e.str(l.Plugin.Command)
	}
	e.strs(l.Scripts)
	e.strs(l.ScriptsIgnore)
	e.strs(l.Runnable)
	e.strs(l.Env)
	e.strs(l.AllowedTools)
	e.str(l.ArgumentHint)
	e.bool(l.DisableModelInvocation)
	switch {
	case l.UserInvocable == nil:
		e.b = append(e.b, 0)
	case *l.UserInvocable:
		e.b = append(e.b, 2)
	default:
		e.b = append(e.b, 1)
	}
	e.str(l.Context)
	e.str(l.Agent)
	e.str(l.Model)
	if l.Warnings == nil {
		e.uvarint(0)
		return
	}
	e.uvarint(uint64(len(l.Warnings)) + 1)
	for _, w := range l.Warnings {
		e.str(w.File)
		e.uvarint(uint64(w.Line))
		e.str(w.Message)
		e.bool(w.Recovered)
	}
}

// dec reads records; strings are substrings of s (the same bytes as b), so
// decoding allocates only slices and structs. err is sticky.
type dec struct {
	b   []byte
	s   string
	off int
	err bool
}

func (d *dec) uvarint() uint64 {
	if d.err {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.err = true
		return 0
	}
	d.off += n
	return v
}

func (d *dec) varint() int64 {
	if d.err {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.err = true
		return 0
	}
	d.off += n
	return v
}

func (d *dec) take(n uint64) (int, int) {
	if d.err || n > uint64(len(d.b)-d.off) {
		d.err = true
		return 0, 0
	}
	start := d.off
	d.off += int(n)
	return start, d.off
}

func (d *dec) str() string {
	i, j := d.take(d.uvarint())
	return d.s[i:j]
}

func (d *dec) bytes() []byte {
	i, j := d.take(d.uvarint())
	return d.b[i:j:j]
}

func (d *dec) byte() byte {
	if d.err || d.off >= len(d.b) {
		d.err = true
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *dec) bool() bool { return d.byte() == 1 }

func (d *dec) count() (int, bool) {
	n := d.uvarint()
	if n == 0 || d.err {
		return 0, false
	}
	if n-1 > uint64(len(d.b)-d.off) { // every element takes at least a byte
		d.err = true
		return 0, false
	}
	return int(n - 1), true
}

func (d *dec) strs() []string {
	n, ok := d.count()
	if !ok {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = d.str()
	}
	return out
}

func (d *dec) raw() []byte {
	n := d.uvarint()
	if n == 0 {
		return nil
	}
	i, j := d.take(n - 1)
	return d.b[i:j:j]
}

func (d *dec) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(0, d.varint()).UTC()
	case 2:
		off := d.varint()
		return time.Unix(0, d.varint()).In(time.FixedZone("", int(off)))
	}
	d.err = true
	return time.Time{}
}

func (d *dec) entry() Entry {
	var x Entry
	x.Name = d.str()
	x.Canonical = d.str()
	x.Source = d.str()
	x.GitURL = d.str()
	x.Ref = d.str()
	x.Constraint = d.str()
	x.Version = d.str()
	x.CommitSHA = d.str()
	x.Trusted = d.bool()
	x.InstalledAt = d.time()
	x.UpdatedAt = d.time()
	x.Path = d.str()
	x.Subdir = d.str()
	x.Description = d.str()
	if d.bool() {
		x.Plugin = &Plugin{Path: d.str(), SHA256: d.str()}
	}
	x.ManifestSHA256 = d.str()
	x.DirHash = d.str()
	if n, ok := d.count(); ok {
		x.Tools = make([]Tool, n)
		for i := range x.Tools {
			x.Tools[i] = Tool{Name: d.str(), Description: d.str(), InputSchema: d.raw()}
		}
	}
	x.PreviousSHA = d.str()
	x.Stamp = d.str()
	x.PreviousDirHash = d.str()
	x.NamedOnly = d.bool()
	if !d.bool() {
		return x
	}
	l := &Listing{}
	l.Fingerprint = d.str()
	l.MinAgentVersion = d.str()
	l.MaxAgentVersion = d.str()
	l.AgentVersion = d.str()
	if d.bool() {
		l.Plugin = &PluginSpec{Build: d.str(), Command: d.str()}
	}
	l.Scripts = d.strs()
	l.ScriptsIgnore = d.strs()
	l.Runnable = d.strs()
	l.Env = d.strs()
	l.AllowedTools = d.strs()
	l.ArgumentHint = d.str()
	l.DisableModelInvocation = d.bool()
	switch d.byte() {
	case 1:
		f := false
		l.UserInvocable = &f
	case 2:
		t := true
		l.UserInvocable = &t
	}
	l.Context = d.str()
	l.Agent = d.str()
	l.Model = d.str()
	if n, ok := d.count(); ok {
		l.Warnings = make([]Problem, n)
		for i := range l.Warnings {
			l.Warnings[i] = Problem{File: d.str(), Line: int(d.uvarint()), Message: d.str(), Recovered: d.bool()}
		}
	}
	x.Listing = l
	return x
}

// known is what the store last read or wrote: entries and their index
// records, in the same order. Only a writer turns it into a map.
type known struct {
	entries []Entry
	recs    []indexed
	stamp   stamp // of the registry.json they came from; zero if unknown
}

func (s *Store) remember(st stamp, entries []Entry, recs []indexed) {
	s.indexMu.Lock()
	s.lines = known{entries: slices.Clone(entries), recs: recs, stamp: st}
	s.indexMu.Unlock()
}

// unchanged returns a copy of the entries this store last read or wrote
// when registry.json is still the file they came from: a command that
// reads the registry several times (lock, recover, commit) decodes it once.
func (s *Store) unchanged(st stamp) ([]Entry, bool) {
	s.indexMu.Lock()
	defer s.indexMu.Unlock()
	if s.lines.stamp != st || s.lines.entries == nil {
		return nil, false
	}
	return slices.Clone(s.lines.entries), true
}

func (s *Store) remembered() known {
	s.indexMu.Lock()
	defer s.indexMu.Unlock()
	return s.lines
}

// indexed writes the index of the registry.json just written from recs.
// Errors are ignored: without an index the next read is only slower.
func (s *Store) indexed(entries []Entry, recs []indexed) {
	st, err := statStamp(s.RegistryPath())
	if err != nil {
		return
	}
	if s.writeIndex(st, recs) == nil {
		s.remember(st, entries, recs)
	}
}

// heal writes the index after a slow read of the registry.json with
// stamp st, unless it was replaced meanwhile.
func (s *Store) heal(st stamp, entries []Entry) {
	recs, err := records(entries, known{})
	if err != nil {
		return
	}
	if now, err := statStamp(s.RegistryPath()); err != nil || now != st {
		return
	}
	if s.writeIndex(st, recs) == nil {
		s.remember(st, entries, recs)
	}
}
