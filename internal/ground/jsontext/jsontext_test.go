package jsontext

import (
	"encoding/json"
	"testing"
)

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"html stays", map[string]string{"requires": ">=3.8 <4 & more"}, `{"requires":">=3.8 <4 & more"}`},
		{"no newline", []int{1, 2}, `[1,2]`},
		{"controls escaped", "a\x1bb", `"a\u001bb"`},
		{"string", "é", `"é"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.in)
			if err != nil || string(got) != tt.want {
				t.Fatalf("Marshal(%v) = %s, %v; want %s", tt.in, got, err, tt.want)
			}
			var back any
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
		})
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("a func marshalled")
	}
}
