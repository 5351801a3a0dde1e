package audit

import "testing"

func TestBuiltinLoads(t *testing.T) {
	rs, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.rules) < 15 {
		t.Fatalf("only %d rules", len(rs.rules))
	}
	t.Log(rs.Pack)
}
