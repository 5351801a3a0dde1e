package registry

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/agentskills/agent/internal/ground/atomicfile"
	"github.com/agentskills/agent/registry/manifest"
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
// compact entry per line; see writeRegistry). The lines are a section of
// their own after the records, with their own checksum: readers (every
// listing) read only the records, about half of the file; a writer reads
// the lines when it writes (remembered).
//
// Layout: magic, stamp (5 uvarints), count, the length of the records
// section, the records (each uvarint-length-prefixed), the CRC-32C of
// everything before it; then the lines (each uvarint-length-prefixed) and
// the CRC-32C of the lines.

const indexMagic = "agent-registry-index 9\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (x *index) path(skills string) string { return filepath.Join(skills, ".index") }

// stamp identifies one version of registry.json: writers replace it by
// rename, so any change gives a new inode or times.
type stamp [5]uint64

func statStamp(p string) (stamp, error) {
	st, err := statPath(p)
	if err != nil {
		return stamp{}, err
	}
	return stamp{st.dev, st.ino, uint64(st.size), uint64(st.mtime), uint64(st.ctime)}, nil
}

// indexed is one entry as the index holds it.
type indexed struct {
	rec  []byte // binary record
	line []byte // registry.json line (compact JSON, no trailing comma); nil until read
}

// indexHead is how much of the index readIndex reads first: the header,
// and the whole records section of a small registry.
const indexHead = 16 << 10

// readIndex returns the entries of the index, and their records without
// the registry.json lines, if it was made from the registry.json with
// stamp st. It reads the records section only; head is its checksum.
func (x *index) read(skills string, st stamp) (entries []Entry, recs []indexed, head uint32, ok bool) {
	f, err := os.Open(x.path(skills))
	if err != nil {
		return nil, nil, 0, false
	}
	defer f.Close()
	buf := make([]byte, indexHead)
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, nil, 0, false
	}
	buf = buf[:n]
	end, ok := headEnd(buf, st)
	if !ok {
		return nil, nil, 0, false
	}
	if end > len(buf) {
		data := make([]byte, end)
		copy(data, buf)
		if _, err := io.ReadFull(f, data[len(buf):]); err != nil {
			return nil, nil, 0, false
		}
		buf = data
	}
	entries, recs, _, ok = decodeHead(buf[:end], st)
	return entries, recs, headCRC(buf, end), ok
}

// headCRC is the checksum of the records section of an index whose
// records section ends at end: what tells a writer that the lines it reads
// later belong to the records it read first.
func headCRC(data []byte, end int) uint32 { return binary.LittleEndian.Uint32(data[end-4 : end]) }

// headEnd parses the header in b and returns where the records section's
// CRC ends, so that a reader knows how much to read.
func headEnd(b []byte, st stamp) (end int, ok bool) {
	if len(b) < len(indexMagic) || string(b[:len(indexMagic)]) != indexMagic {
		return 0, false
	}
	d := &dec{b: b, off: len(indexMagic)}
	for i := range st {
		if d.uvarint() != st[i] {
			return 0, false
		}
	}
	d.uvarint() // count
	size := d.uvarint()
	if d.err || size > 1<<40 {
		return 0, false
	}
	return d.off + int(size) + 4, true
}

// decodeHead decodes the header and records section at the start of data
// (at least headEnd bytes) and returns where the lines section starts.
func decodeHead(data []byte, st stamp) (entries []Entry, recs []indexed, linesAt int, ok bool) {
	defer func() {
		if recover() != nil { // a damaged index is only a slow read
			entries, recs, linesAt, ok = nil, nil, 0, false
		}
	}()
	end, ok := headEnd(data, st)
	if !ok || end > len(data) || end < len(indexMagic)+4 {
		return nil, nil, 0, false
	}
	body := data[:end-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[end-4:end]) {
		return nil, nil, 0, false
	}
	d := &dec{b: body, s: unsafe.String(&body[0], len(body)), off: len(indexMagic)}
	for range st {
		d.uvarint()
	}
	n := d.uvarint()
	d.uvarint() // size of the records section
	if d.err || n > uint64(len(body)) {
		return nil, nil, 0, false
	}
	// A little room at the end lets workspace.AllEntries merge in the
	// bundled skills without copying every entry.
	entries = make([]Entry, 0, n+4)
	recs = make([]indexed, 0, n)
	sl := &slab{listings: make([]Listing, 0, n)}
	for i := uint64(0); i < n; i++ {
		i, j := d.take(d.uvarint())
		if d.err {
			return nil, nil, 0, false
		}
		rec := d.b[i:j:j]
		rd := &dec{b: rec, s: d.s[i:j], slab: sl}
		entries = entries[:len(entries)+1]
		rd.entry(&entries[len(entries)-1])
		if rd.err || rd.off != len(rec) {
			return nil, nil, 0, false
		}
		recs = append(recs, indexed{rec: rec})
	}
	if d.off != len(body) {
		return nil, nil, 0, false
	}
	return entries, recs, end, true
}

// decodeIndex decodes a whole index, lines included.
func decodeIndex(data []byte, st stamp) (entries []Entry, recs []indexed, ok bool) {
	entries, recs, at, ok := decodeHead(data, st)
	if !ok || !decodeLines(data[at:], recs) {
		return nil, nil, false
	}
	return entries, recs, true
}

// decodeLines sets the line of each of recs from the lines section b.
func decodeLines(b []byte, recs []indexed) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if len(b) < 4 {
		return false
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return false
	}
	d := &dec{b: body}
	lines := make([][]byte, len(recs))
	for i := range lines {
		if lines[i] = d.bytes(); d.err || lines[i] == nil {
			return false
		}
	}
	if d.off != len(body) {
		return false
	}
	for i := range recs {
		recs[i].line = lines[i]
	}
	return true
}

// writeIndex writes the index of the registry.json with stamp st. It is
// not fsynced: after a crash a stale or torn index fails its stamp or CRC
// check, and registry.json, which is fsynced, is read instead.
func (x *index) write(skills string, st stamp, recs []indexed) error {
	size, recsSize, linesSize := len(indexMagic)+64, 0, 0
	for _, r := range recs {
		recsSize += len(r.rec) + binary.MaxVarintLen64
		linesSize += len(r.line) + binary.MaxVarintLen64
	}
	b := make([]byte, 0, size+recsSize+linesSize)
	b = append(b, indexMagic...)
	for _, v := range st {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(recs)))
	sec := make([]byte, 0, recsSize)
	for _, r := range recs {
		sec = binary.AppendUvarint(sec, uint64(len(r.rec)))
		sec = append(sec, r.rec...)
	}
	b = binary.AppendUvarint(b, uint64(len(sec)))
	b = append(b, sec...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	at := len(b)
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r.line)))
		b = append(b, r.line...)
	}
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[at:], castagnoli))
	return atomicfile.Write(x.path(skills), b, 0o644)
}

// records encodes entries for the index, reusing the registry.json line
// of every entry that is unchanged since prev was read.
func records(entries []Entry, known known) ([]indexed, error) {
	prev := make(map[string]indexed, len(known.recs))
	for _, r := range known.recs {
		if r.line != nil {
			prev[recCanonical(r.rec)] = r
		}
	}
	out := make([]indexed, len(entries))
	// One buffer for all records (each a full slice of it), sized from
	// the previous ones: 1,000 entries cost a few allocations, not
	// thousands. A record is never changed once made.
	size := 4 << 10
	for _, r := range known.recs {
		size += len(r.rec)
	}
	e := enc{b: make([]byte, 0, size)}
	for i := range entries {
		start := len(e.b)
		e.entry(&entries[i])
		rec := e.b[start:len(e.b):len(e.b)]
		out[i].rec = rec
		if p, ok := prev[entries[i].Canonical]; ok && bytes.Equal(p.rec, rec) {
			out[i].line = p.line
			continue
		}
		line, err := json.Marshal(entries[i].wire())
		if err != nil {
			return nil, err
		}
		out[i].line = line
	}
	return out, nil
}

// recCanonical is the canonical name in a record (its second field); rec
// is never modified once made, so the name shares its bytes.
func recCanonical(rec []byte) string {
	if len(rec) == 0 {
		return ""
	}
	d := &dec{b: rec, s: unsafe.String(&rec[0], len(rec))}
	d.str()
	return d.str()
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
	e.str(x.URL)
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
			e.str(t.Title)
			e.raw(t.Annotations)
			e.raw(t.OutputSchema)
		}
	}
	e.str(x.PreviousSHA)
	e.str(x.Stamp)
	e.str(x.PreviousDirHash)
	e.bool(x.NamedOnly)
	e.uvarint(uint64(len(x.Placements)))
	for _, p := range x.Placements {
		e.str(p.Folder)
		e.str(p.Dir)
		e.strs(p.Agents)
		e.bool(p.Link)
		e.str(p.Placed)
		e.strs(p.Made)
	}
	e.str(x.Signer)
	e.strs(x.TrustedHashes)
	l := x.Listing
	if l == nil {
		e.bool(false)
		return
	}
	e.bool(true)
	e.str(l.Fingerprint)
	m := &l.Manifest
	e.str(m.MinAgentVersion)
	e.str(m.MaxAgentVersion)
	e.str(m.AgentVersion)
	if m.Plugin == nil {
		e.bool(false)
	} else {
		e.bool(true)
		e.str(m.Plugin.Build)
		e.str(m.Plugin.Command)
	}
	e.strs(m.Scripts)
	e.strs(m.ScriptsIgnore)
	e.strs(l.Runnable)
	e.strs(m.Permissions.Env)
	e.strs(m.Permissions.FS.Read)
	e.strs(m.Permissions.FS.Write)
	e.strs(m.Permissions.Network)
	e.strs(m.AllowedTools)
	e.str(m.ArgumentHint)
	e.bool(m.DisableModelInvocation)
	switch {
	case m.UserInvocable == nil:
		e.b = append(e.b, 0)
	case *m.UserInvocable:
		e.b = append(e.b, 2)
	default:
		e.b = append(e.b, 1)
	}
	e.str(m.Context)
	e.str(m.Agent)
	e.str(m.Model)
	e.str(l.Requires)
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
	// slab, when set, gives the slices and listings of a whole index.
	slab *slab
}

// slab hands out the slices and listings of one index's entries from a
// few large allocations: 1,000 entries took about 6,000 small ones, a
// good part of the decode's time. Each piece is capped (s[i:j:j]) so that
// an append to one never writes over the next.
type slab struct {
	strs     []string
	tools    []Tool
	listings []Listing
}

// slabChunk is how many strings or tools one allocation holds.
const slabChunk = 512

func take[T any](pool *[]T, n int) []T {
	if n == 0 {
		return []T{}
	}
	p := *pool
	if n > cap(p)-len(p) {
		p = make([]T, 0, max(n, slabChunk))
	}
	out := p[len(p) : len(p)+n : len(p)+n]
	*pool = p[:len(p)+n]
	return out
}

func (d *dec) makeStrs(n int) []string {
	if d.slab == nil {
		return make([]string, n)
	}
	return take(&d.slab.strs, n)
}

func (d *dec) makeTools(n int) []Tool {
	if d.slab == nil {
		return make([]Tool, n)
	}
	return take(&d.slab.tools, n)
}

func (d *dec) newListing() *Listing {
	if d.slab == nil || len(d.slab.listings) == cap(d.slab.listings) {
		return &Listing{}
	}
	ls := d.slab.listings
	d.slab.listings = ls[:len(ls)+1]
	return &d.slab.listings[len(ls)]
}

func (d *dec) uvarint() uint64 {
	if d.off < len(d.b) && d.b[d.off] < 0x80 && !d.err { // most are one byte
		d.off++
		return uint64(d.b[d.off-1])
	}
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
	// Most strings are shorter than 128 bytes: a one-byte length.
	if i := d.off + 1; i <= len(d.b) && !d.err {
		if n := int(d.b[d.off]); n < 0x80 && n <= len(d.b)-i {
			d.off = i + n
			return d.s[i:d.off]
		}
	}
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
	out := d.makeStrs(n)
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

// entry decodes a record into x, which is zero.
func (d *dec) entry(x *Entry) {
	x.Name = d.str()
	x.Canonical = d.str()
	x.Source = d.str()
	x.URL = d.str()
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
		x.Tools = d.makeTools(n)
		for i := range x.Tools {
			x.Tools[i] = Tool{Name: d.str(), Description: d.str(), InputSchema: d.raw(), Title: d.str(), Annotations: d.raw(), OutputSchema: d.raw()}
		}
	}
	x.PreviousSHA = d.str()
	x.Stamp = d.str()
	x.PreviousDirHash = d.str()
	x.NamedOnly = d.bool()
	if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)-d.off) {
		x.Placements = make([]Placement, n)
		for i := range x.Placements {
			x.Placements[i] = Placement{Folder: d.str(), Dir: d.str(), Agents: d.strs(), Link: d.bool(), Placed: d.str(), Made: d.strs()}
		}
	} else if n > 0 {
		d.err = true
	}
	x.Signer = d.str()
	x.TrustedHashes = d.strs()
	if !d.bool() {
		return
	}
	l := d.newListing()
	m := &l.Manifest
	m.Name, m.Description, m.Version = x.Name, x.Description, x.Version
	l.Fingerprint = d.str()
	m.MinAgentVersion = d.str()
	m.MaxAgentVersion = d.str()
	m.AgentVersion = d.str()
	if d.bool() {
		m.Plugin = &manifest.PluginSpec{Build: d.str(), Command: d.str()}
	}
	m.Scripts = d.strs()
	m.ScriptsIgnore = d.strs()
	l.Runnable = d.strs()
	m.Permissions.Env = d.strs()
	m.Permissions.FS.Read = d.strs()
	m.Permissions.FS.Write = d.strs()
	m.Permissions.Network = d.strs()
	m.AllowedTools = d.strs()
	m.ArgumentHint = d.str()
	m.DisableModelInvocation = d.bool()
	switch d.byte() {
	case 1:
		f := false
		m.UserInvocable = &f
	case 2:
		t := true
		m.UserInvocable = &t
	}
	m.Context = d.str()
	m.Agent = d.str()
	m.Model = d.str()
	l.Requires = d.str()
	m.Metadata = requiresMetadata(l.Requires)
	if n, ok := d.count(); ok {
		l.Warnings = make([]manifest.Problem, n)
		for i := range l.Warnings {
			l.Warnings[i] = manifest.Problem{File: d.str(), Line: int(d.uvarint()), Message: d.str(), Recovered: d.bool()}
		}
	}
	x.Listing = l
}

// known is what the store last read or wrote: the index records of its
// entries (their lines only once a writer needed them), and the stamp of
// the registry.json they came from. Entries are decoded from the records
// again when asked for, which costs less than a copy kept for a reader
// that never asks (every listing).
// index is a room of the store of its own: registry.json's binary index
// (skills/.index) and the registry.json lines of the entries last read,
// which write reuses for entries it does not change.
type index struct {
	mu    sync.Mutex
	lines known
}

type known struct {
	recs  []indexed
	stamp stamp  // zero if unknown
	head  uint32 // the checksum of the records section read, when the lines were not
}

func (x *index) remember(st stamp, recs []indexed, head uint32) {
	x.mu.Lock()
	x.lines = known{recs: recs, stamp: st, head: head}
	x.mu.Unlock()
}

// unchanged returns the entries this store last read or wrote when
// registry.json is still the file they came from: a command that reads
// the registry several times (lock, recover, commit) reads it once.
func (x *index) unchanged(st stamp) ([]Entry, bool) {
	x.mu.Lock()
	k := x.lines
	x.mu.Unlock()
	if k.stamp != st || k.recs == nil {
		return nil, false
	}
	entries := make([]Entry, len(k.recs))
	for i, r := range k.recs {
		d := &dec{b: r.rec, s: unsafe.String(unsafe.SliceData(r.rec), len(r.rec))}
		if d.entry(&entries[i]); d.err {
			return nil, false
		}
	}
	return entries, true
}

// remembered returns what the store last read or wrote, with the
// registry.json lines, which a writer reuses: when they were not read yet,
// it reads them from the index, which is still the one of k.stamp when
// the stamps match (writers hold the lock).
func (x *index) remembered(skills string) known {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := x.lines
	if len(k.recs) == 0 || k.recs[0].line != nil {
		return k
	}
	data, err := os.ReadFile(x.path(skills))
	if err != nil {
		return k
	}
	end, ok := headEnd(data, k.stamp)
	if !ok || end > len(data) || headCRC(data, end) != k.head {
		return k
	}
	recs := slices.Clone(k.recs)
	if !decodeLines(data[end:], recs) {
		return k
	}
	x.lines.recs = recs
	return x.lines
}

// indexed writes the index of the registry.json just written from recs.
// Errors are ignored: without an index the next read is only slower.
func (x *index) indexed(skills string, recs []indexed) {
	st, err := statStamp(filepath.Join(skills, "registry.json"))
	if err != nil {
		return
	}
	if x.write(skills, st, recs) == nil {
		x.remember(st, recs, 0)
	}
}

// heal writes the index after a slow read of the registry.json with
// stamp st, unless it was replaced meanwhile.
func (x *index) heal(skills string, st stamp, entries []Entry) {
	recs, err := records(entries, known{})
	if err != nil {
		return
	}
	if now, err := statStamp(filepath.Join(skills, "registry.json")); err != nil || now != st {
		return
	}
	if x.write(skills, st, recs) == nil {
		x.remember(st, recs, 0)
	}
}
