package lazyregexp

import "testing"

func TestLazy(t *testing.T) {
	r := New(`^v(\d+)$`)
	if r.rx != nil {
		t.Fatal("compiled before first use")
	}
	if got := r.FindStringSubmatch("v12"); len(got) != 2 || got[1] != "12" {
		t.Fatalf("FindStringSubmatch = %q", got)
	}
	if r.MatchString("x") || r.String() != `^v(\d+)$` {
		t.Fatal("MatchString or String")
	}
	bad := New(`(`)
	if err := CompileAll(); err == nil {
		t.Fatal("CompileAll accepted a bad pattern")
	}
	all = all[:len(all)-1]
	_ = bad
}
