package flock_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentskills/agent/internal/ground/flock"
)

// Each open file holds its own lock, as two processes would.
func TestLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		t.Helper()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := flock.Lock(a); err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := flock.TryLock(b); !errors.Is(err, flock.ErrBusy) {
		t.Fatalf("TryLock while held: %v, want ErrBusy", err)
	}
	done := make(chan error, 1)
	go func() { done <- flock.Lock(b) }()
	if err := flock.Unlock(a); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if err := flock.TryLock(a); !errors.Is(err, flock.ErrBusy) {
		t.Fatalf("TryLock while the other holds it: %v, want ErrBusy", err)
	}
	b.Close() // closing releases
	if err := flock.TryLock(a); err != nil {
		t.Fatalf("TryLock after the holder closed: %v", err)
	}
}
