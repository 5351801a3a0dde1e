package deps

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestSettle(t *testing.T) {
	inst := func(t *testing.T, name, version, requires string) Installed {
		return Installed{Name: name, URL: "https://github.com/o/" + name, Version: version, Requires: root(t, requires)}
	}
	move := func(t *testing.T, version, requires string) Move {
		return Move{Version: version, Requires: root(t, requires)}
	}
	tests := []struct {
		name      string
		installed func(t *testing.T) []Installed
		moves     func(t *testing.T) map[string]Move
		held      map[string]string // name -> part of the reason
		missing   []string          // requirements to install
	}{
		{name: "a requirer's constraint holds the dependency",
			installed: func(t *testing.T) []Installed {
				return []Installed{inst(t, "a", "1.0.0", "o/x@^2"), inst(t, "x", "2.2.0", "")}
			},
			moves: func(t *testing.T) map[string]Move { return map[string]Move{"x": move(t, "3.0.0", "")} },
			held:  map[string]string{"x": "a requires x@^2, and the new version is 3.0.0"}},
		{name: "requirer and dependency move together",
			installed: func(t *testing.T) []Installed {
				return []Installed{inst(t, "a", "1.0.0", "o/x@^2"), inst(t, "x", "2.2.0", "")}
			},
			moves: func(t *testing.T) map[string]Move {
				return map[string]Move{"a": move(t, "2.0.0", "o/x@^3"), "x": move(t, "3.0.0", "")}
			}},
		{name: "a new constraint the dependency does not reach holds the requirer",
			installed: func(t *testing.T) []Installed {
				return []Installed{inst(t, "a", "1.0.0", "o/x@^2"), inst(t, "x", "2.2.0", "")}
			},
			moves: func(t *testing.T) map[string]Move { return map[string]Move{"a": move(t, "2.0.0", "o/x@^3")} },
			held:  map[string]string{"a": "its new version 2.0.0 requires x@^3, and x would be at 2.2.0"}},
		{name: "a new requirement nothing installed meets is missing",
			installed: func(t *testing.T) []Installed {
				return []Installed{inst(t, "a", "1.0.0", "")}
			},
			moves:   func(t *testing.T) map[string]Move { return map[string]Move{"a": move(t, "2.0.0", "o/y@^1")} },
			missing: []string{"o/y@^1"}},
		{name: "what was unmet already stays as it is",
			installed: func(t *testing.T) []Installed {
				return []Installed{inst(t, "a", "1.0.0", "o/z@^1")}
			},
			moves: func(t *testing.T) map[string]Move { return map[string]Move{"a": move(t, "1.1.0", "o/z@^1")} }},
		{name: "holds cascade",
			installed: func(t *testing.T) []Installed {
				return []Installed{inst(t, "a", "1.0.0", "o/x@^2"), inst(t, "x", "2.2.0", "o/y@^4"), inst(t, "y", "4.0.0", "")}
			},
			moves: func(t *testing.T) map[string]Move {
				return map[string]Move{"a": move(t, "2.0.0", "o/x@^3"), "x": move(t, "3.0.0", "o/y@^5")}
			},
			held: map[string]string{"x": "its new version 3.0.0 requires y@^5, and y would be at 4.0.0", "a": "requires x@^3, and x would be at 2.2.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held, missing := Settle(tt.installed(t), tt.moves(t))
			var names []string
			for n := range held {
				names = append(names, n)
			}
			var want []string
			for n := range tt.held {
				want = append(want, n)
			}
			sort.Strings(names)
			sort.Strings(want)
			if !reflect.DeepEqual(names, want) {
				t.Fatalf("held %v, want %v", held, tt.held)
			}
			for n, why := range tt.held {
				if !strings.Contains(held[n], why) {
					t.Errorf("%s held for %q, want it to say %q", n, held[n], why)
				}
			}
			var got []string
			for _, u := range missing {
				got = append(got, u.Req.String())
			}
			if strings.Join(got, ",") != strings.Join(tt.missing, ",") {
				t.Errorf("missing = %v, want %v", got, tt.missing)
			}
		})
	}
}
