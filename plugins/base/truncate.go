package base

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// middleOut keeps the first and the last max/2 bytes written to it and
// counts what falls between, so that a long output keeps both its start
// (what ran) and its end (how it ended) in bounded memory. It is safe for
// the concurrent writes of a command's stdout and stderr.
type middleOut struct {
	mu    sync.Mutex
	half  int
	head  []byte
	tail  []byte // ring buffer of at most half bytes once full
	pos   int    // next write position in tail once it is full
	total int64
	lines int64 // newlines written
}

func newMiddleOut(max int) *middleOut {
	if max < 2 {
		max = 2
	}
	return &middleOut{half: max / 2}
}

func (m *middleOut) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(p)
	m.total += int64(n)
	m.lines += int64(bytes.Count(p, []byte{'\n'}))
	if room := m.half - len(m.head); room > 0 {
		k := min(room, len(p))
		m.head = append(m.head, p[:k]...)
		p = p[k:]
	}
	if len(p) >= m.half {
		m.tail = append(m.tail[:0], p[len(p)-m.half:]...)
		m.pos = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(m.tail) < m.half {
			k := min(m.half-len(m.tail), len(p))
			m.tail = append(m.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(m.tail[m.pos:], p)
		m.pos = (m.pos + k) % m.half
		p = p[k:]
	}
	return n, nil
}

// String is the kept text: all of it when it fit, else head, a marker that
// says how many lines and bytes were left out, and tail, cut at line ends
// where there are any. Invalid UTF-8 is replaced.
func (m *middleOut) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	tail := append(append([]byte{}, m.tail[m.pos:]...), m.tail[:m.pos]...)
	kept := int64(len(m.head) + len(tail))
	if kept == m.total {
		return strings.ToValidUTF8(string(m.head)+string(tail), "\uFFFD")
	}
	head := m.head
	if i := bytes.LastIndexByte(head, '\n'); i >= len(head)/2 {
		head = head[:i+1]
	}
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)/2 {
		tail = tail[i+1:]
	}
	head, tail = trimRunes(head, tail)
	omitted := m.total - int64(len(head)+len(tail))
	lines := m.lines - int64(bytes.Count(head, []byte{'\n'})+bytes.Count(tail, []byte{'\n'}))
	var b strings.Builder
	b.WriteString(strings.ToValidUTF8(string(head), "\uFFFD"))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[... %d lines (%d bytes) left out of the middle ...]\n", lines, omitted)
	b.WriteString(strings.ToValidUTF8(string(tail), "\uFFFD"))
	return b.String()
}

// truncated reports whether String leaves anything out.
func (m *middleOut) truncated() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return int64(len(m.head)+len(m.tail)) < m.total
}

// trimRunes drops a rune cut in two at the end of head or the start of
// tail.
func trimRunes(head, tail []byte) ([]byte, []byte) {
	if n := len(head); n > 0 {
		j := n - 1
		for j > 0 && n-j < utf8.UTFMax && !utf8.RuneStart(head[j]) {
			j--
		}
		if !utf8.FullRune(head[j:]) {
			head = head[:j]
		}
	}
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	return head, tail
}

// MiddleOut truncates s to about max bytes the way command output is
// truncated: head and tail kept, a marker in between.
func MiddleOut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	m := newMiddleOut(max)
	m.Write([]byte(s))
	return m.String()
}
