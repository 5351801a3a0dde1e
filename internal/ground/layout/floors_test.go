package layout

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// floor is one floor of the house (docs/architecture.md, "Floors"): the
// folders it holds, and its height. A package may import its own floor
// and the floors below it, never one above.
type floor struct {
	name    string
	height  int
	folders []string
}

// fixtures is the height of the test fixtures: they may import anything,
// and only tests (and other fixtures) may import them.
const fixtures = -1

// floors is docs/architecture.md's table; TestFloorsTableIsDocumented
// keeps the two the same. The most specific folder decides a package's
// floor.
var floors = []floor{
	{"front ends", 5, []string{"cmd"}},
	{"application", 4, []string{"internal/app"}},
	{"host, plugins, registry", 3, []string{"host", "plugins", "registry"}},
	{"mechanisms", 2, []string{"internal/isolation", "internal/build", "internal/telemetry", "internal/disclosure"}},
	{"ground", 1, []string{"internal/ground"}},
	{"sdk and proto", 0, []string{"sdk", "proto"}},
	{"test fixtures", fixtures, []string{"internal/testutil", "internal/reliability", "examples", "host/internal/testplugin"}},
}

// floorOf returns the floor of rel (a path inside the repository), or
// nil when no folder of the table holds it.
func floorOf(rel string) *floor {
	var best *floor
	bestLen := -1
	for i := range floors {
		for _, f := range floors[i].folders {
			if under(rel, f) && len(f) > bestLen {
				best, bestLen = &floors[i], len(f)
			}
		}
	}
	return best
}

// floorViolations returns one line per import that runs from a lower
// floor to a higher one, or from production code to a test fixture.
func floorViolations(pkgs map[string]pkg) []string {
	var bad []string
	for path, p := range pkgs {
		rel, in := project(path)
		if !in {
			continue
		}
		from := floorOf(rel)
		if from == nil {
			bad = append(bad, fmt.Sprintf("%s is on no floor: add its folder to the floors of docs/architecture.md and internal/ground/layout", rel))
			continue
		}
		check := func(imp string, test bool) {
			irel, in := project(imp)
			if !in || under(irel, rel) {
				return
			}
			to := floorOf(irel)
			switch {
			case to == nil:
				bad = append(bad, fmt.Sprintf("%s imports %s, which is on no floor", rel, irel))
			case to.height == fixtures:
				if !test && from.height != fixtures {
					bad = append(bad, fmt.Sprintf("%s imports %s: test fixtures are for tests only", rel, irel))
				}
			case from.height != fixtures && to.height > from.height:
				kind := "imports"
				if test {
					kind = "imports in a test"
				}
				bad = append(bad, fmt.Sprintf("%s (%s, floor %d) %s %s (%s, floor %d): no import runs up a floor",
					rel, from.name, from.height, kind, irel, to.name, to.height))
			}
		}
		for _, imp := range p.Imports {
			check(imp, false)
		}
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
			check(imp, true)
		}
	}
	sort.Strings(bad)
	return slices.Compact(bad)
}

// TestNoImportRunsUpAFloor lists every package of the repository, with its
// tests' imports, for each platform the agent ships on.
func TestNoImportRunsUpAFloor(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("this test lists packages with the go command: %v", err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			for _, v := range floorViolations(list(t, goos)) {
				t.Error(v)
			}
		})
	}
}

// TestFloorViolations feeds the checker imports that break the rule, so a
// checker that passes everything fails here.
func TestFloorViolations(t *testing.T) {
	p := func(rel string, imports ...string) pkg {
		q := pkg{ImportPath: module + "/" + rel}
		for _, i := range imports {
			if tst, ok := strings.CutPrefix(i, "test:"); ok {
				q.XTestImports = append(q.XTestImports, module+"/"+tst)
			} else {
				q.Imports = append(q.Imports, module+"/"+i)
			}
		}
		return q
	}
	tests := []struct {
		name string
		pkg  pkg
		want string // "" wants no violation
	}{
		{"ground imports a mechanism", p("internal/ground/jsontext", "internal/telemetry"),
			"internal/ground/jsontext (ground, floor 1) imports internal/telemetry (mechanisms, floor 2)"},
		{"registry imports the application", p("registry", "internal/app/install"),
			"registry (host, plugins, registry, floor 3) imports internal/app/install"},
		{"the application imports a front end", p("internal/app/workspace", "cmd/agent/internal/mcp"),
			"internal/app/workspace (application, floor 4) imports cmd/agent/internal/mcp"},
		{"a test imports up", p("internal/isolation/sandbox", "test:host"),
			"internal/isolation/sandbox (mechanisms, floor 2) imports in a test host"},
		{"production code imports a fixture", p("registry", "internal/testutil/gittest"),
			"registry imports internal/testutil/gittest: test fixtures are for tests only"},
		{"a folder on no floor", p("internal/newroom"), "internal/newroom is on no floor"},
		{"down and sideways", p("internal/app/install", "internal/app/workspace", "host", "internal/build/plugbuild", "internal/ground/flock", "sdk"), ""},
		{"a test imports a fixture", p("registry", "test:internal/testutil/gittest"), ""},
		{"a fixture imports anything", p("internal/testutil/gittest", "internal/build/sdkmod", "registry"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := floorViolations(map[string]pkg{tt.pkg.ImportPath: tt.pkg})
			if tt.want == "" {
				if len(got) > 0 {
					t.Fatalf("floorViolations = %q, want none", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, tt.want) }) {
				t.Fatalf("floorViolations = %q, want one starting %q", got, tt.want)
			}
		})
	}
}

// TestFloorsTableIsDocumented: docs/architecture.md holds the floors
// table row for row, so the rule a newcomer reads is the one enforced.
func TestFloorsTableIsDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range floors {
		quoted := make([]string, len(f.folders))
		for i, d := range f.folders {
			quoted[i] = "`" + d + "/`"
		}
		height := fmt.Sprint(f.height)
		if f.height == fixtures {
			height = "tests only"
		}
		row := fmt.Sprintf("| %s | %s | %s |", height, f.name, strings.Join(quoted, ", "))
		if !strings.Contains(string(b), row) {
			t.Errorf("docs/architecture.md lacks the floors row\n%s", row)
		}
	}
}

// folderOf returns the folder of the floors table that holds rel.
func folderOf(rel string) string {
	best := ""
	for _, f := range floors {
		for _, d := range f.folders {
			if under(rel, d) && len(d) > len(best) {
				best = d
			}
		}
	}
	return best
}

// TestFloorGraph draws the folders' import graph for docs/architecture.md:
//
//	go test ./internal/ground/layout -run TestFloorGraph -v
//
// Each arrow is counted in packages imported; test fixtures are left out.
func TestFloorGraph(t *testing.T) {
	pkgs := list(t, "linux")
	count := map[[2]string]int{}
	for path, p := range pkgs {
		rel, in := project(path)
		if !in || floorOf(rel) == nil || floorOf(rel).height == fixtures {
			continue
		}
		for _, imp := range p.Imports {
			irel, in := project(imp)
			if !in || floorOf(irel) == nil {
				continue
			}
			from, to := folderOf(rel), folderOf(irel)
			if from != to {
				count[[2]string{from, to}]++
			}
		}
	}
	id := func(folder string) string { return strings.NewReplacer("/", "_").Replace(folder) }
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	for _, f := range floors {
		if f.height == fixtures {
			continue
		}
		fmt.Fprintf(&b, "  subgraph f%d[\"%d: %s\"]\n", f.height, f.height, f.name)
		for _, d := range f.folders {
			fmt.Fprintf(&b, "    %s[%s/]\n", id(d), d)
		}
		b.WriteString("  end\n")
	}
	edges := make([][2]string, 0, len(count))
	for e := range count {
		edges = append(edges, e)
	}
	slices.SortFunc(edges, func(x, y [2]string) int { return strings.Compare(x[0]+" "+x[1], y[0]+" "+y[1]) })
	for _, e := range edges {
		fmt.Fprintf(&b, "  %s -->|%d| %s\n", id(e[0]), count[e], id(e[1]))
	}
	t.Log("\n" + b.String())
}
