package loadout_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readPackages are the packages that read skills' files: every open of a
// file there goes through internal/safefile (os.Root, O_NONBLOCK, the
// type checked on the open handle), so a FIFO or device swapped into a
// skill folder is refused at once instead of blocking a reader for good
// (a FIFO hung GET /v1/diagnostics, and kept it hung).
var readPackages = []string{"safety", "catalog", "source", "httpapi", "webui", "portable", "wellknown", "mcpserver", "plugin", "remote", "render", "service", "skill"}

// directOpens are the calls that open a file without internal/safefile.
var directOpens = map[string]bool{
	"os.Open": true, "os.OpenFile": true, "os.ReadFile": true, "os.OpenInRoot": true, "os.DirFS": true,
	"(*os.Root).Open": true, "(*os.Root).OpenFile": true, "(*os.Root).ReadFile": true, "(*os.Root).FS": true,
	"io/ioutil.ReadFile": true, "syscall.Open": true, "syscall.Openat": true,
	"golang.org/x/sys/unix.Open": true, "golang.org/x/sys/unix.Openat": true, "golang.org/x/sys/unix.Openat2": true,
}

// allowedOpens are the direct opens that stay, by "file function callee",
// each with why it is not a read of a skill's file that could block.
var allowedOpens = map[string]string{
	"source/dir_linux.go openDirAt golang.org/x/sys/unix.Openat": "opens a folder with O_DIRECTORY (a FIFO is refused by the kernel), by its path or relative to its parent's fd",
	"source/dir_linux.go dirHandle.readInto syscall.Openat":      "the scan's own open of SKILL.md and ignore files, by the folder's fd: O_NONBLOCK, then fstat refuses what is not a regular file (safefile's rule)",
	"source/dir_other.go openDir os.OpenFile":                    "opens a folder with O_NONBLOCK; ReadDir fails on anything else",
	"source/dir_other.go dirHandle.readInto os.OpenFile":         "as dir_linux.go's readInto: O_NONBLOCK, then fstat refuses what is not a regular file",
	"source/skilldir.go sniffFile os.OpenFile":                   "O_NONBLOCK, then fstat refuses what is not a regular file, before the first 512 bytes are read",
	"portable/dir.go dirImport.list (*os.Root).OpenFile":         "lists a folder of the import: O_NONBLOCK, and ReadDir fails on anything but a folder (its files are opened with safefile.OpenIn)",
	"portable/dir.go ExportDir (*os.Root).Open":                  "lists the export folder (must be empty); no file is read",
	"portable/dir.go ExportDir (*os.Root).OpenFile":              "creates each exported file (O_CREATE|O_EXCL)",
	"portable/zip.go ImportZipFile os.Open":                      "the archive a person names on the command line, not a skill folder",
	"remote/lock.go ReadLock os.ReadFile":                        "the lock file loadout writes, not a skill's",
	"remote/verify.go ReadPolicyFile os.Open":                    "a key or allowed-signers file the operator's config names (resolved against the config's folder), read at most MaxPolicyFileBytes; never a skill's",
	"remote/lease.go acquireLease os.OpenFile":                   "a lease file loadout creates beside its snapshots (flock), never a skill's",
	"remote/lease.go removeUnleased os.OpenFile":                 "a lease file loadout creates beside its snapshots (flock), never a skill's",
	"remote/lease_unix.go lockFolder os.Open":                    "opens the cache folder itself to flock it; nothing is read",
	"remote/index.go IndexFetcher.download (*os.Root).OpenFile":  "the download file loadout creates (O_CREATE|O_TRUNC, 0600)",
	"remote/gitfetch/gitfetch.go writer.file os.OpenFile":        "creates each file of a snapshot (O_CREATE|O_EXCL)",
	"remote/index.go unpacker.write (*os.Root).OpenFile":         "creates each unpacked file (O_CREATE|O_EXCL)",
	"safety/saved.go LoadSaved os.OpenFile":                      "the findings file loadout writes in its cache folder: O_NONBLOCK, then fstat refuses what is not a regular file",
	"skill/strict.go readRegular os.OpenFile":                    "O_NONBLOCK, then fstat refuses what is not a regular file (skill cannot import safefile, which imports skill)",
}

// TestReadsGoThroughSafefile finds, with the type checker, every direct
// open of a file in the packages that read skills (non-test files), and
// fails on one not in allowedOpens, and on an allowedOpens entry that
// matches nothing (the list says what is true, no more).
func TestReadsGoThroughSafefile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the export data of every package")
	}
	var pkgs []string
	for _, p := range readPackages {
		pkgs = append(pkgs, "./"+p+"/...")
	}
	out, err := exec.Command("go", append([]string{"list", "-deps", "-export", "-f", "{{.ImportPath}}|{{.Export}}|{{.Dir}}|{{join .GoFiles \",\"}}"}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	type pkg struct {
		path, dir string
		files     []string
	}
	var mine []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 4 {
			t.Fatalf("go list: unexpected line %q", line)
		}
		exports[f[0]] = f[1]
		rel, ok := strings.CutPrefix(f[0], module+"/")
		if !ok {
			continue
		}
		for _, p := range readPackages {
			if rel == p || strings.HasPrefix(rel, p+"/") {
				mine = append(mine, pkg{rel, f[2], strings.Split(f[3], ",")})
				break
			}
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if e := exports[path]; e != "" {
			return os.Open(e)
		}
		return nil, fmt.Errorf("no export data for %s", path)
	})
	found := map[string][]string{} // allowedOpens key -> positions
	for _, p := range mine {
		var files []*ast.File
		for _, name := range p.files {
			if name == "" {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(module+"/"+p.path, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", p.path, err)
		}
		for i, f := range files {
			file := p.path + "/" + p.files[i]
			walkCalls(f, func(fn string, sel *ast.SelectorExpr) {
				var callee string
				if s, ok := info.Selections[sel]; ok {
					callee = types.ObjectString(s.Obj(), nil)
					if m, ok := s.Obj().(*types.Func); ok {
						callee = methodName(m)
					}
				} else if obj, ok := info.Uses[sel.Sel]; ok && obj.Pkg() != nil {
					callee = obj.Pkg().Path() + "." + obj.Name()
				}
				if directOpens[callee] {
					key := file + " " + fn + " " + callee
					found[key] = append(found[key], fset.Position(sel.Pos()).String())
				}
			})
		}
	}
	// Files of other platforms are not type-checked here: their
	// package-qualified opens are found by name.
	otherOS := regexp.MustCompile(`\b(os\.(Open|OpenFile|ReadFile|OpenInRoot)|(syscall|unix)\.Open(at2?)?)\(`)
	for _, p := range mine {
		names, _ := filepath.Glob(filepath.Join(p.dir, "*.go"))
		for _, n := range names {
			base := filepath.Base(n)
			if strings.HasSuffix(base, "_test.go") || contains(p.files, base) {
				continue
			}
			data, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range otherOS.FindAllString(string(data), -1) {
				prefix := p.path + "/" + base + " "
				ok := false
				for k := range allowedOpens {
					if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, " "+strings.TrimSuffix(m, "(")) {
						found[k] = append(found[k], n)
						ok = true
					}
				}
				if !ok {
					found[prefix+"? "+strings.TrimSuffix(m, "(")] = append(found[prefix+"? "+strings.TrimSuffix(m, "(")], n)
				}
			}
		}
	}
	var keys []string
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := allowedOpens[k]; !ok {
			t.Errorf("%s opens a file directly (%s): open skills' files with internal/safefile (Open, OpenIn), or, if this is not a read of a skill's file, add %q to allowedOpens in opens_test.go saying why", found[k][0], k, k)
		}
	}
	for k := range allowedOpens {
		if _, ok := found[k]; !ok {
			t.Errorf("allowedOpens has %q, which matches no call: remove it", k)
		}
	}
}

// methodName is "(*os.Root).Open" for a method, "os.Open" for a function.
func methodName(m *types.Func) string {
	sig := m.Type().(*types.Signature)
	if sig.Recv() == nil {
		return m.Pkg().Path() + "." + m.Name()
	}
	return "(" + types.TypeString(sig.Recv().Type(), nil) + ")." + m.Name()
}

// walkCalls calls f for every call of a selector (x.F(…)) in file, with
// the enclosing top-level function's name ("Type.method" for a method).
func walkCalls(file *ast.File, f func(fn string, sel *ast.SelectorExpr)) {
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			rt := fd.Recv.List[0].Type
			if st, ok := rt.(*ast.StarExpr); ok {
				rt = st.X
			}
			if ix, ok := rt.(*ast.IndexExpr); ok {
				rt = ix.X
			}
			if id, ok := rt.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
					f(name, sel)
				}
			}
			return true
		})
	}
}
