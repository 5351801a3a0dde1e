package bpe

import "testing"

func BenchmarkOpen(b *testing.B) {
	for b.Loop() {
		if _, err := Open(CL100KBase); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCL100K(b *testing.B) {
	for b.Loop() {
		if _, err := CL100K(); err != nil {
			b.Fatal(err)
		}
	}
}
