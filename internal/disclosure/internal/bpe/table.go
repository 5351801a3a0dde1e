// Package bpe holds byte-pair-encoding rank tables in a compact form that
// needs no parsing: a header, the byte offset of each rank's token, an
// open-addressing hash index and the token bytes, all little-endian. The
// table is used straight from the embedded string, so opening it costs
// nothing, where building tiktoken-go's maps costs ~150-230 ms and a
// runtime-built hash ~20 ms.
//
// cl100k_base.bpe is generated from tiktoken-go-loader's cl100k_base.tiktoken
// by `go generate` (gen/main.go); a test rebuilds it and compares bytes.
package bpe

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
)

const magic = "BPETAB1\n"

// header: magic, n (ranks), nslots; then off[n+1], slots[nslots], blob.
const headerLen = len(magic) + 8

// ErrFormat is returned (wrapped) for a table that is not in this format.
var ErrFormat = errors.New("bpe table format")

// Table maps token bytes to ranks 0..n-1.
type Table struct {
	data   string
	n      int
	mask   uint32
	slots  int // byte offset of the slots
	blob   int // byte offset of the blob
	offset int // byte offset of off[]
}

// Build converts a .tiktoken file ("<base64 token> <rank>" per line, ranks
// 0..n-1 in order) into the compact form.
func Build(src []byte) ([]byte, error) {
	var blob []byte
	var off []uint32
	for line := 1; len(src) > 0; line++ {
		l := src
		if nl := bytes.IndexByte(src, '\n'); nl >= 0 {
			l, src = src[:nl], src[nl+1:]
		} else {
			src = nil
		}
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("%w: line %d: want '<base64> <rank>'", ErrFormat, line)
		}
		rank := 0
		for _, c := range l[sp+1:] {
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("%w: line %d: bad rank %q", ErrFormat, line, l[sp+1:])
			}
			rank = rank*10 + int(c-'0')
		}
		if rank != len(off) {
			return nil, fmt.Errorf("%w: line %d: rank %d out of order (want %d)", ErrFormat, line, rank, len(off))
		}
		tok, err := base64.StdEncoding.DecodeString(string(l[:sp]))
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, line, err)
		}
		off = append(off, uint32(len(blob)))
		blob = append(blob, tok...)
	}
	n := len(off)
	off = append(off, uint32(len(blob)))
	nslots := 1
	for nslots < 2*n {
		nslots <<= 1
	}
	slots := make([]uint32, nslots)
	mask := uint32(nslots - 1)
	for r := 0; r < n; r++ {
		key := blob[off[r]:off[r+1]]
		h := hash(string(key)) & mask
		for slots[h] != 0 {
			o := slots[h] - 1
			if bytes.Equal(blob[off[o]:off[o+1]], key) {
				return nil, fmt.Errorf("%w: token of rank %d repeats rank %d", ErrFormat, r, o)
			}
			h = (h + 1) & mask
		}
		slots[h] = uint32(r + 1)
	}
	out := make([]byte, 0, headerLen+4*(len(off)+nslots)+len(blob))
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(n))
	out = binary.LittleEndian.AppendUint32(out, uint32(nslots))
	for _, o := range off {
		out = binary.LittleEndian.AppendUint32(out, o)
	}
	for _, s := range slots {
		out = binary.LittleEndian.AppendUint32(out, s)
	}
	return append(out, blob...), nil
}

// Open checks a table built by Build and returns a view of it. It copies
// nothing; it checks the frame, every offset and the index, so that no
// lookup can fail or loop on a corrupt table, whatever the bytes.
func Open(data string) (*Table, error) {
	t, nslots, err := openFrame(data)
	if err != nil {
		return nil, err
	}
	prev := uint32(0)
	for r := 0; r <= t.n; r++ {
		o := u32(data, t.offset+4*r)
		if o < prev {
			return nil, fmt.Errorf("%w: offset of rank %d goes backwards", ErrFormat, r)
		}
		prev = o
	}
	empty := false
	for i := 0; i < nslots; i++ {
		s := u32(data, t.slots+4*i)
		if s == 0 {
			empty = true
		} else if int(s) > t.n {
			return nil, fmt.Errorf("%w: slot %d names rank %d of %d", ErrFormat, i, s-1, t.n)
		}
	}
	if !empty {
		return nil, fmt.Errorf("%w: the index has no empty slot", ErrFormat)
	}
	return t, nil
}

// openFrame checks only the header and the overall size.
func openFrame(data string) (*Table, int, error) {
	if len(data) < headerLen || data[:len(magic)] != magic {
		return nil, 0, fmt.Errorf("%w: bad header", ErrFormat)
	}
	t := &Table{data: data}
	t.n = int(u32(data, len(magic)))
	nslots := int(u32(data, len(magic)+4))
	if nslots == 0 || nslots&(nslots-1) != 0 || nslots > len(data)/4 || t.n > len(data)/4 {
		return nil, 0, fmt.Errorf("%w: slot count %d is not a power of two", ErrFormat, nslots)
	}
	t.mask = uint32(nslots - 1)
	t.offset = headerLen
	t.slots = t.offset + 4*(t.n+1)
	t.blob = t.slots + 4*nslots
	if t.n < 0 || t.blob < 0 || t.blob > len(data) || t.blob+int(u32(data, t.offset+4*t.n)) != len(data) {
		return nil, 0, fmt.Errorf("%w: truncated", ErrFormat)
	}
	return t, nslots, nil
}

// CL100K returns the embedded cl100k_base table. Only its frame is checked
// here, which costs nothing; the full check of Open (about 2 ms) runs in
// the tests, which also prove the table is exactly what Build makes of
// tiktoken-go-loader's file.
func CL100K() (*Table, error) {
	t, _, err := openFrame(CL100KBase)
	return t, err
}

// Len is the number of ranks.
func (t *Table) Len() int { return t.n }

// Token returns the bytes of rank r.
func (t *Table) Token(r int) string {
	a := int(u32(t.data, t.offset+4*r))
	b := int(u32(t.data, t.offset+4*r+4))
	return t.data[t.blob+a : t.blob+b]
}

// Rank returns the rank of the token key, if it is one.
func (t *Table) Rank(key string) (int, bool) {
	h := hash(key) & t.mask
	for {
		s := u32(t.data, t.slots+4*int(h))
		if s == 0 {
			return 0, false
		}
		if t.Token(int(s-1)) == key {
			return int(s - 1), true
		}
		h = (h + 1) & t.mask
	}
}

func u32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

// hash is 32-bit FNV-1a: fixed, so the index can be built ahead of time.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
