package ocitest

import (
	"strings"
	"sync"
)

// logBuffer keeps the last lines the registry wrote, for failure messages.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
}

const keepLines = 200

func (b *logBuffer) add(line string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, line)
	if len(b.lines) > keepLines {
		b.lines = b.lines[len(b.lines)-keepLines:]
	}
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}
