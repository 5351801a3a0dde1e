package layout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/agentskills/agent"

// rule is one row of SPEC §2's table: the packages under pkg (pkg itself
// and pkg/...) may import the project packages under may, their own
// subpackages and any leaf. The most specific row applies.
type rule struct {
	pkg string
	may []string
	// any: may import every project package but those under never.
	any   bool
	never []string
	// noStd are standard packages it must not import: registry/manifest
	// is pure parsing, reading only through an fs.FS.
	noStd []string
	why   string
}

// rules is SPEC §2's table. "registry" in a may list means registry and
// its subpackages. A package no row names must be a leaf: it imports
// nothing of the project but sdk, proto and other leaves, so it may be
// imported from anywhere (an atomic writer, process containment, the
// permissions.env matcher, test fakes).
var rules = []rule{
	{pkg: "proto"},
	{pkg: "sdk", may: []string{"proto"}},
	{pkg: "sdk/sdktest", may: []string{"sdk"}},
	{pkg: "host", may: []string{"sdk", "proto"}},
	{pkg: "plugins/exec", may: []string{"sdk"}},
	{pkg: "plugins/base", may: []string{"sdk"}},
	{pkg: "registry", may: []string{"registry"}},
	{pkg: "registry/manifest", noStd: []string{"os", "syscall", "net", "io/ioutil"},
		why: "registry/manifest is pure parsing: it reads through an fs.FS that the caller opens"},
	{pkg: "registry/gitsrc", may: []string{"registry/manifest", "registry/ocisrc", "registry/signing"},
		why: "registry/signing: the signed objects of a fetched commit (SPEC §18)"},
	{pkg: "registry/signing", why: "signatures and signer keys only: it checks what sources hand it (SPEC §18)"},
	{pkg: "registry/ocisrc", may: []string{"registry/manifest"},
		why: "a source as gitsrc is (SPEC §18)"},
	{pkg: "internal/app/bundled", may: []string{"registry"},
		why: "the bundled skills as registry entries"},
	{pkg: "internal/app/placement", may: []string{"registry"},
		why: "copies of installed registry entries in other agents' skill folders (SPEC §19)"},
	{pkg: "internal/app/audit", may: []string{"registry/manifest"},
		why: "reads a skill's files against its manifest's permissions; fetching stays in registry (issue 39)"},
	{pkg: "internal/app/install", may: []string{"registry", "host", "sdk", "internal/build/plugbuild", "internal/build/sdkmod", "plugins/exec"}},
	{pkg: "internal/app/workspace", may: []string{"registry", "host", "sdk", "plugins/exec", "plugins/base", "internal/app/bundled"},
		why: "plugins/exec, plugins/base and internal/app/bundled are the built-in tools and skills it routes"},
	{pkg: "cmd/agent/internal/mcp", may: []string{"internal/app/workspace", "sdk"},
		why: "sdk: the tool descriptions and error codes an Outcome carries"},
	{pkg: "cmd/agent/internal/run", may: []string{"internal/app/workspace", "sdk"},
		why: "sdk: the tool descriptions and error codes an Outcome carries"},
	{pkg: "internal/app", may: []string{"internal/app", "registry", "host", "plugins", "sdk"},
		why: "a room of the application floor (docs/architecture.md) that has no row of its own yet"},
	{pkg: "cmd", any: true, never: []string{"host"},
		why: "front ends never import host (SPEC §2): they reach it through the workspace"},
}

// onlyUnderCmd are the outside modules SPEC §2 keeps to cmd/.
var onlyUnderCmd = []string{"github.com/spf13/cobra", "github.com/spf13/viper"}

// under reports whether rel is p or below it.
func under(rel, p string) bool { return rel == p || strings.HasPrefix(rel, p+"/") }

// ruleFor returns the most specific row for rel, or nil.
func ruleFor(rel string) *rule {
	var best *rule
	for i := range rules {
		r := &rules[i]
		if under(rel, r.pkg) && (best == nil || len(r.pkg) > len(best.pkg)) {
			best = r
		}
	}
	return best
}

type pkg struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// list is `go list -json` over every package of the three modules, built
// for goos.
func list(t *testing.T, goos string) map[string]pkg {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	consultSources(t, root)
	out := map[string]pkg{}
	for _, dir := range []string{".", "sdk", "proto"} {
		cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
		cmd.Dir = filepath.Join(root, dir)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "CGO_ENABLED=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		data, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list in %s (GOOS=%s): %v\n%s", cmd.Dir, goos, err, stderr.Bytes())
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		for {
			var p pkg
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("decode go list: %v", err)
			}
			if p.Error != nil && !strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
				t.Errorf("go list %s (GOOS=%s): %s", p.ImportPath, goos, p.Error.Err)
			}
			out[p.ImportPath] = p
		}
	}
	if len(out) < 10 {
		t.Fatalf("go list found %d packages; expected the whole repository", len(out))
	}
	return out
}

// consultSources stats every Go file under root. go list reads them in
// a child process, which go test's cache does not see; statting them here
// makes an edit anywhere rerun the test instead of replaying a pass.
func consultSources(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk the sources: %v", err)
	}
}

// project returns p's path inside the repository and whether it is one.
func project(path string) (string, bool) {
	if path == module {
		return "", true
	}
	rel, ok := strings.CutPrefix(path, module+"/")
	return rel, ok
}

// violations returns one line per import that the table forbids.
func violations(pkgs map[string]pkg) []string {
	leaf := map[string]bool{}
	var isLeaf func(rel string, seen map[string]bool) bool
	isLeaf = func(rel string, seen map[string]bool) bool {
		if v, ok := leaf[rel]; ok {
			return v
		}
		if ruleFor(rel) != nil || seen[rel] {
			return false
		}
		seen[rel] = true
		ok := true
		for _, imp := range pkgs[module+"/"+rel].Imports {
			irel, in := project(imp)
			if !in || under(irel, rel) || under(irel, "sdk") || under(irel, "proto") {
				continue
			}
			if !isLeaf(irel, seen) {
				ok = false
			}
		}
		leaf[rel] = ok
		return ok
	}

	var bad []string
	for path, p := range pkgs {
		rel, in := project(path)
		if !in {
			continue
		}
		r := ruleFor(rel)
		for _, imp := range p.Imports {
			if slices.ContainsFunc(onlyUnderCmd, func(m string) bool { return imp == m || strings.HasPrefix(imp, m+"/") }) && !under(rel, "cmd") {
				bad = append(bad, fmt.Sprintf("%s imports %s: cobra and viper appear only under cmd/", rel, imp))
			}
			if r != nil && slices.ContainsFunc(r.noStd, func(n string) bool { return under(imp, n) }) {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s", rel, imp, r.why))
			}
			irel, in := project(imp)
			if !in || under(irel, rel) {
				continue
			}
			switch {
			case r == nil:
				if !under(irel, "sdk") && !under(irel, "proto") && !isLeaf(irel, map[string]bool{}) {
					bad = append(bad, fmt.Sprintf("%s imports %s: %s is in no row of SPEC §2's table, so it must be a leaf (import nothing of the project but sdk, proto and leaves); add a row to rules in internal/ground/layout if it is a layer of its own", rel, irel, rel))
				}
			case r.any:
				if i := slices.IndexFunc(r.never, func(n string) bool { return under(irel, n) }); i >= 0 {
					bad = append(bad, fmt.Sprintf("%s imports %s: %s", rel, irel, r.why))
				}
			default:
				if slices.ContainsFunc(r.may, func(m string) bool { return under(irel, m) }) || isLeaf(irel, map[string]bool{}) {
					continue
				}
				bad = append(bad, fmt.Sprintf("%s imports %s: SPEC §2 lets %s import only %s and leaves", rel, irel, r.pkg, orNothing(r.may)))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

func orNothing(may []string) string {
	if len(may) == 0 {
		return "nothing of the project"
	}
	return strings.Join(may, ", ")
}

// TestImportsFollowSPEC checks every package's imports, as built for each
// platform the agent ships on, against SPEC §2's table.
func TestImportsFollowSPEC(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("this test lists packages with the go command: %v", err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			for _, v := range violations(list(t, goos)) {
				t.Error(v)
			}
		})
	}
}

// TestViolationsNamesTheImporter feeds the checker imports SPEC §2
// forbids, so that a checker which passes everything fails here.
func TestViolationsNamesTheImporter(t *testing.T) {
	p := func(rel string, imports ...string) pkg {
		q := pkg{ImportPath: module + "/" + rel}
		for _, i := range imports {
			if std, ok := strings.CutPrefix(i, "std:"); ok {
				q.Imports = append(q.Imports, std)
			} else if strings.Contains(i, ".") {
				q.Imports = append(q.Imports, i)
			} else {
				q.Imports = append(q.Imports, module+"/"+i)
			}
		}
		return q
	}
	tests := []struct {
		name string
		pkgs []pkg
		want string // "" wants no violation
	}{
		{"cli imports host", []pkg{p("cmd/agent/internal/cli", "host", "internal/app/workspace")},
			"cmd/agent/internal/cli imports host: front ends never import host"},
		{"mcp imports host", []pkg{p("cmd/agent/internal/mcp", "host")},
			"cmd/agent/internal/mcp imports host: SPEC §2 lets cmd/agent/internal/mcp import only"},
		{"run imports a host subpackage", []pkg{p("cmd/agent/internal/run", "host/internal/testplugin")},
			"cmd/agent/internal/run imports host/internal/testplugin"},
		{"install imports workspace", []pkg{p("internal/app/install", "internal/app/workspace", "registry")},
			"internal/app/install imports internal/app/workspace"},
		{"registry imports host", []pkg{p("registry", "host")}, "registry imports host"},
		{"host imports registry", []pkg{p("host", "registry")}, "host imports registry"},
		{"manifest imports gitsrc", []pkg{p("registry/manifest", "registry/gitsrc")}, "registry/manifest imports registry/gitsrc"},
		{"manifest reads the disk", []pkg{p("registry/manifest", "std:io/fs", "std:os")}, "registry/manifest imports os: registry/manifest is pure parsing"},
		{"cobra outside cmd", []pkg{p("internal/app/workspace", "github.com/spf13/cobra")}, "internal/app/workspace imports github.com/spf13/cobra"},
		{"a new package that is no leaf", []pkg{p("internal/newthing", "registry")},
			"internal/newthing imports registry: internal/newthing is in no row"},
		{"a layer through a new leaf-looking package", []pkg{p("cmd/agent/internal/mcp", "internal/shim"), p("internal/shim", "host")},
			"cmd/agent/internal/mcp imports internal/shim"},
		{"a leaf from anywhere", []pkg{p("registry", "internal/ground/flock"), p("internal/ground/flock"), p("cmd/agent/internal/mcp", "internal/ground/flock")}, ""},
		{"a leaf that imports sdk", []pkg{p("registry", "internal/ground/tooldesc"), p("internal/ground/tooldesc", "sdk")}, ""},
		{"cmd imports workspace", []pkg{p("cmd/agent/internal/cli", "internal/app/workspace", "registry", "internal/app/install")}, ""},
		{"a package imports its own subpackage", []pkg{p("registry", "registry/gitsrc"), p("registry/gitsrc", "registry/manifest")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]pkg{}
			for _, q := range tt.pkgs {
				m[q.ImportPath] = q
			}
			got := violations(m)
			if tt.want == "" {
				if len(got) > 0 {
					t.Fatalf("violations = %q, want none", got)
				}
				return
			}
			if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, tt.want) }) {
				t.Fatalf("violations = %q, want one starting %q", got, tt.want)
			}
		})
	}
}
