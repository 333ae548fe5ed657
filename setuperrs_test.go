package loadout_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// setupCalls are the os functions whose only result is an error: a test
// that calls one as a statement (or assigns it to _) drops a failed
// setup, and then tests something else than it says.
var setupCalls = map[string]bool{"WriteFile": true, "MkdirAll": true, "Mkdir": true, "Remove": true, "RemoveAll": true,
	"Symlink": true, "Link": true, "Chmod": true, "Chtimes": true, "Rename": true, "Truncate": true, "Chdir": true,
	"Setenv": true, "Unsetenv": true, "Chown": true, "Lchown": true}

// checkedSetup are the folders whose tests check every setup call
// (testutil.Write, testutil.Mkdir, testutil.Must, or inline); the others
// are counted and logged (go test -run TestSetupErrorsChecked -v .):
// attack (the harness).
var checkedSetup = []string{"internal", "store", "portable", "plugin", "skill", "source", "examples", "sqlite", "postgres", "watch",
	"catalog", "httpapi", "mcpserver", "wellknown", "webui", "bench", "remote", "service", "cmd"}

// TestSetupErrorsChecked finds, in every _test.go file, calls of
// setupCalls whose error is dropped; it fails on those under
// checkedSetup, and logs the count of every folder.
func TestSetupErrorsChecked(t *testing.T) {
	per := map[string]int{}
	total := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !importsOS(f) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var call *ast.CallExpr
			switch s := n.(type) {
			case *ast.FuncDecl:
				// TestMain's removals at exit are cleanup, with no test
				// to fail.
				return s.Name.Name != "TestMain"
			case *ast.ExprStmt:
				call, _ = s.X.(*ast.CallExpr)
			case *ast.AssignStmt:
				if len(s.Lhs) == 1 && len(s.Rhs) == 1 {
					if id, ok := s.Lhs[0].(*ast.Ident); ok && id.Name == "_" {
						call, _ = s.Rhs[0].(*ast.CallExpr)
					}
				}
			}
			if call == nil {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "os" || !setupCalls[sel.Sel.Name] {
				return true
			}
			dir := filepath.ToSlash(filepath.Dir(p))
			per[dir]++
			total++
			for _, c := range checkedSetup {
				if dir == c || strings.HasPrefix(dir, c+"/") {
					t.Errorf("%s: os.%s drops its error: use testutil.Write, testutil.Mkdir or testutil.Must(t, …)", fset.Position(call.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dirs := make([]string, 0, len(per))
	for d := range per {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	var b strings.Builder
	for _, d := range dirs {
		b.WriteString("\n  " + strconv.Itoa(per[d]) + " " + d)
	}
	t.Logf("setup calls whose error is dropped: %d%s", total, b.String())
}

func importsOS(f *ast.File) bool {
	for _, imp := range f.Imports {
		if imp.Path.Value == `"os"` && imp.Name == nil {
			return true
		}
	}
	return false
}
