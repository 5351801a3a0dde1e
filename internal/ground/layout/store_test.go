package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxStoreMethods is how many methods the store core's *Store may have
// (issue 40: the rest of the registry are rooms of their own, see
// docs/architecture.md, "The registry split").
const maxStoreMethods = 25

// TestStoreCoreStaysSmall counts the method declarations on registry's
// Store (exported or not) in the package's non-test files.
func TestStoreCoreStaysSmall(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "registry")
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == "Store" {
				methods = append(methods, fn.Name.Name)
			}
		}
	}
	if len(methods) == 0 {
		t.Fatalf("no methods of Store found under %s: the test reads the wrong folder", dir)
	}
	if len(methods) > maxStoreMethods {
		sort.Strings(methods)
		t.Fatalf("*registry.Store has %d methods, at most %d: give the new ones a room of their own (docs/architecture.md, \"The registry split\"):\n%s",
			len(methods), maxStoreMethods, strings.Join(methods, "\n"))
	}
	t.Logf("*registry.Store: %d methods", len(methods))
}
