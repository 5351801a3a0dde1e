package disclosure

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/agentskills/agent/internal/disclosure/internal/bpe"
)

// Tokenizer counts the tokens a model would see for a text.
type Tokenizer interface {
	Count(text string) int
}

// ErrTokenizer is returned (wrapped) when the BPE table cannot be loaded.
var ErrTokenizer = errors.New("load tokenizer")

// CL100K is OpenAI's cl100k_base byte-pair encoding. It is a real BPE: the
// same rank table as tiktoken (generated from the file embedded by
// github.com/pkoukk/tiktoken-go-loader), the same pre-tokenizer and the same
// merge rule, and the tests check that it yields exactly the token ids of
// github.com/pkoukk/tiktoken-go with that loader. It exists because
// tiktoken-go needs 150-230 ms here to build its tables (a Go map of 100k
// strings, a reverse map, a sorted copy and a backtracking regexp), which
// alone is several times the 30 ms budget of `agent prompt` (SPEC §11), and
// a hash built at run time still costs ~20 ms. Here the table is a
// pre-built index embedded in the binary (package bpe) that is used in
// place, and the pre-tokenizer is a hand-written scanner equivalent to
// tiktoken's regular expression.
type CL100K struct {
	once sync.Once
	tab  *bpe.Table
	err  error
}

var _ Tokenizer = (*CL100K)(nil)

var shared CL100K

// DefaultTokenizer returns the process-wide cl100k_base tokenizer. Its table
// is built on first use only, so commands that never count pay nothing.
func DefaultTokenizer() *CL100K { return &shared }

// Load opens (and checks) the rank table now instead of on the first Count.
func (t *CL100K) Load() error {
	t.once.Do(func() {
		t.tab, t.err = bpe.CL100K()
		if t.err != nil {
			t.err = fmt.Errorf("%w: cl100k_base: %v", ErrTokenizer, t.err)
		}
	})
	return t.err
}

// Count returns the number of cl100k_base tokens in text. Special tokens such
// as <|endoftext|> are counted as ordinary text, which is how a skill
// description reaches a model. It panics only if the embedded table is
// broken, which the tests rule out.
func (t *CL100K) Count(text string) int {
	return t.encode(text, nil)
}

// Encode returns the token ids of text (used by tests to compare with
// tiktoken-go).
func (t *CL100K) Encode(text string) []int {
	var ids []int
	t.encode(text, func(id int) { ids = append(ids, id) })
	return ids
}

// encode passes the token ids of text to emit and returns how many there
// are; with emit nil it only counts, which saves the last lookup of every
// merged part.
func (t *CL100K) encode(text string, emit func(int)) int {
	if err := t.Load(); err != nil {
		panic(err)
	}
	if !utf8.ValidString(text) {
		// tiktoken-go converts to []rune, turning each invalid byte into
		// U+FFFD; do the same so that the counts agree.
		text = string([]rune(text))
	}
	var parts []part
	n := 0
	for i := 0; i < len(text); {
		j := nextPiece(text, i)
		piece := text[i:j]
		if r, ok := t.tab.Rank(piece); ok {
			n++
			if emit != nil {
				emit(r)
			}
		} else {
			parts = merge(t.tab, piece, parts[:0])
			n += len(parts) - 1
			if emit != nil {
				emitParts(t.tab, piece, parts, emit)
			}
		}
		i = j
	}
	return n
}

// part is a boundary of the byte-pair merge: the start of a part and the rank
// of merging it with the next one.
type part struct {
	start int
	rank  int
}

// merge is tiktoken's byte_pair_merge: repeatedly join the adjacent pair with
// the lowest rank (the leftmost on ties) until no pair is a token. The
// tokens are the pieces between the parts' starts (len(parts)-1 of them).
func merge(t *bpe.Table, piece string, parts []part) []part {
	for i := 0; i <= len(piece); i++ {
		parts = append(parts, part{start: i, rank: math.MaxInt})
	}
	getRank := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := t.Rank(piece[parts[i].start:parts[i+skip+2].start]); ok {
				return r
			}
		}
		return math.MaxInt
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = getRank(i, 0)
	}
	for len(parts) > 1 {
		minRank, minIdx := math.MaxInt, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, minIdx = parts[i].rank, i
			}
		}
		if minIdx < 0 {
			break
		}
		i := minIdx
		parts[i].rank = getRank(i, 1)
		if i > 0 {
			parts[i-1].rank = getRank(i-1, 1)
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	return parts
}

// emitParts passes the token id of each part merge left.
func emitParts(t *bpe.Table, piece string, parts []part, emit func(int)) {
	for i := 0; i+1 < len(parts); i++ {
		r, ok := t.Rank(piece[parts[i].start:parts[i+1].start])
		if !ok {
			// Every single byte is a token in cl100k_base, so a part left
			// over is always one; this guards a corrupt table.
			panic(fmt.Sprintf("cl100k: no rank for %q", piece[parts[i].start:parts[i+1].start]))
		}
		emit(r)
	}
}

// nextPiece returns the end of the pre-tokenizer piece that starts at byte i
// of s (valid UTF-8). It is equivalent to the leftmost match, at i, of
// cl100k_base's pattern
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// under a backtracking engine (regexp2, whose \s is unicode.IsSpace), with
// the alternatives tried in order.
func nextPiece(s string, i int) int {
	r0, n0 := utf8.DecodeRuneInString(s[i:])
	at := func(j int) (rune, int) {
		if j >= len(s) {
			return -1, 0
		}
		return utf8.DecodeRuneInString(s[j:])
	}
	// 1. contractions
	if r0 == '\'' {
		r1, n1 := at(i + n0)
		switch unicode.ToLower(r1) {
		case 's', 't', 'm', 'd':
			return i + n0 + n1
		case 'r', 'v', 'l':
			want := map[rune]rune{'r': 'e', 'v': 'e', 'l': 'l'}[unicode.ToLower(r1)]
			if r2, n2 := at(i + n0 + n1); n2 > 0 && unicode.ToLower(r2) == want {
				return i + n0 + n1 + n2
			}
		}
	}
	isL, isN, isS := unicode.IsLetter, unicode.IsNumber, unicode.IsSpace
	letters := func(j int) int {
		for {
			r, n := at(j)
			if n == 0 || !isL(r) {
				return j
			}
			j += n
		}
	}
	// 2. [^\r\n\p{L}\p{N}]?\p{L}+
	if isL(r0) {
		return letters(i + n0)
	}
	if r0 != '\r' && r0 != '\n' && !isN(r0) {
		if r1, n1 := at(i + n0); n1 > 0 && isL(r1) {
			return letters(i + n0 + n1)
		}
	}
	// 3. \p{N}{1,3}
	if isN(r0) {
		j := i + n0
		for k := 1; k < 3; k++ {
			r, n := at(j)
			if n == 0 || !isN(r) {
				break
			}
			j += n
		}
		return j
	}
	// 4.  ?[^\s\p{L}\p{N}]+[\r\n]*
	other := func(r rune) bool { return !isS(r) && !isL(r) && !isN(r) }
	punct := func(j int) int {
		for {
			r, n := at(j)
			if n == 0 || !other(r) {
				break
			}
			j += n
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	if r0 == ' ' {
		if r1, n1 := at(i + n0); n1 > 0 && other(r1) {
			return punct(i + n0)
		}
	}
	if other(r0) {
		return punct(i)
	}
	// r0 is white space: find the run.
	end, last, lastNL := i, i, -1
	for {
		r, n := at(end)
		if n == 0 || !isS(r) {
			break
		}
		if r == '\r' || r == '\n' {
			lastNL = end
		}
		last = end
		end += n
	}
	// 5. \s*[\r\n]+
	if lastNL >= 0 {
		return lastNL + 1
	}
	// 6. \s+(?!\S)
	if end == len(s) {
		return end
	}
	if last > i {
		return last
	}
	// 7. \s+
	return end
}
