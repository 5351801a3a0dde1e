package parallel

import (
	"fmt"
	"sync/atomic"
	"testing"
)

func TestFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		n, workers int
	}{
		{name: "none", n: 0, workers: 0},
		{name: "one", n: 1, workers: 4},
		{name: "serial", n: 50, workers: 1},
		{name: "every core", n: 1000, workers: 0},
		{name: "more workers than work", n: 3, workers: 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			calls := make([]atomic.Int32, tt.n)
			var running, most atomic.Int32
			For(tt.n, tt.workers, func(i int) {
				r := running.Add(1)
				for {
					m := most.Load()
					if r <= m || most.CompareAndSwap(m, r) {
						break
					}
				}
				calls[i].Add(1)
				running.Add(-1)
			})
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Errorf("f(%d) was called %d times, want once", i, c)
				}
			}
			if tt.workers == 1 && most.Load() > 1 {
				t.Errorf("%d calls ran at once with one worker", most.Load())
			}
		})
	}
}

func ExampleFor() {
	words := []string{"a", "bb", "ccc"}
	lengths := make([]int, len(words))
	For(len(words), 0, func(i int) { lengths[i] = len(words[i]) })
	fmt.Println(lengths) // in order, whatever order they ran in
	// Output: [1 2 3]
}
