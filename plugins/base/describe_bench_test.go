package base

import (
	"context"
	"testing"
)

// BenchmarkDescribe is what listing the base tools costs a CLI command
// that merges the bundled skills (once per process).
func BenchmarkDescribe(b *testing.B) {
	for b.Loop() {
		if _, err := New(Config{}).Describe(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
