package protocol_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The generated protocol code and the go-plugin glue stay behind the
// packages that wrap them: no exported identifier of host/extension or
// sdk mentions them, and the CLI does not import them at all.
func TestProtocolStaysInternal(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../../host/extension", "../../sdk", "../../host"} {
		for _, leak := range exportedMentions(t, dir, "pb", "protocol") {
			t.Errorf("%s: %s", dir, leak)
		}
	}
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/panto-dev/panto/cmd/panto").Output()
	require.NoError(t, err)
	for _, imp := range strings.Split(string(out), "\n") {
		require.NotContains(t, imp, "/internal/pb", "cmd/panto imports the generated code")
		require.NotContains(t, imp, "/internal/protocol", "cmd/panto imports the protocol glue")
	}
}

// exportedMentions lists the exported declarations of the package in dir
// whose signature or fields name one of the packages pkgs.
func exportedMentions(t *testing.T, dir string, pkgs ...string) []string {
	t.Helper()
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var leaks []string
	mentions := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					for _, p := range pkgs {
						if id.Name == p {
							found = true
						}
					}
				}
			}
			return !found
		})
		return found
	}
	for _, path := range matches {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				if mentions(d.Type) {
					leaks = append(leaks, "func "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && exportedPartMentions(s.Type, mentions) {
							leaks = append(leaks, "type "+s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Type != nil && mentions(s.Type) {
								leaks = append(leaks, "var "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	return leaks
}

func exportedRecv(fl *ast.FieldList) bool {
	t := fl.List[0].Type
	if st, ok := t.(*ast.StarExpr); ok {
		t = st.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// exportedPartMentions looks at a struct's exported fields only, an
// interface's methods, and any other type whole.
func exportedPartMentions(t ast.Expr, mentions func(ast.Node) bool) bool {
	if st, ok := t.(*ast.StructType); ok {
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				if n.IsExported() && mentions(f.Type) {
					return true
				}
			}
		}
		return false
	}
	return mentions(t)
}
