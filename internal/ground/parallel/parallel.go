// Package parallel runs the independent steps of a batch on every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls f(i) for every i in [0, n) on up to workers goroutines (0:
// one per core, GOMAXPROCS) and returns when all calls have returned.
// Indices are taken in increasing order, so a caller that stops taking
// work after a failure at i has started nothing it would not have
// started serially up to i plus workers-1. f must be safe for concurrent
// use; results go by index into slices the caller made.
func For(n, workers int, f func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
