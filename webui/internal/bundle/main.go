// Command bundle builds the UI's editor bundle, webui/static/editor.js,
// from webui/editor (CodeMirror 6, pinned in package.json and
// package-lock.json; install it with `npm ci` in webui/editor) with
// esbuild's Go API. The output is minified and reproducible: the same
// node_modules give the same bytes, which a test checks against the
// committed file. The UI gzips it once when first asked (webui's
// precompressed), like every other asset.
//
// Run it from webui/ with `go generate ./webui` (or `go run
// ./internal/bundle` in webui/).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	dir := flag.String("editor", "editor", "the editor's npm folder (with node_modules installed by npm ci)")
	out := flag.String("o", filepath.Join("static", "editor.js"), "the bundle to write")
	flag.Parse()
	b, err := build(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bundle:", err)
		os.Exit(1)
	}
}

// header starts the bundle: where it comes from and how to rebuild it.
const header = "/* loadout editor bundle: CodeMirror 6 (MIT), built from webui/editor by `go generate ./webui`. Do not edit. */"

// build bundles dir/src/editor.js into one minified IIFE.
func build(dir string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(abs, "node_modules")); err != nil {
		return nil, fmt.Errorf("%s has no node_modules: run `npm ci` there first", abs)
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:       []string{filepath.Join(abs, "src", "editor.js")},
		AbsWorkingDir:     abs,
		Bundle:            true,
		Format:            api.FormatIIFE,
		Target:            api.ES2020,
		Platform:          api.PlatformBrowser,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
		Banner:            map[string]string{"js": header},
		Write:             false,
		Outfile:           "editor.js",
		LogLevel:          api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		var msgs []string
		for _, m := range res.Errors {
			loc := ""
			if m.Location != nil {
				loc = fmt.Sprintf("%s:%d: ", m.Location.File, m.Location.Line)
			}
			msgs = append(msgs, loc+m.Text)
		}
		return nil, fmt.Errorf("esbuild: %s", strings.Join(msgs, "; "))
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("esbuild wrote %d files, want 1", len(res.OutputFiles))
	}
	return bytes.ReplaceAll(res.OutputFiles[0].Contents, []byte("\r\n"), []byte("\n")), nil
}
