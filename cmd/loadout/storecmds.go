package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/plugin"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
	"github.com/loadout/loadout/store"
)

func init() {
	commands["import"] = command{"import skills (folders, .json, .zip) into the store", runImport}
	commands["export"] = command{"export a skill as JSON, a zip or a folder", runExport}
	commands["versions"] = command{"list a stored skill's versions", runVersions}
	commands["restore"] = command{"make an earlier version of a stored skill current", runRestore}
	commands["enable"] = command{"enable a stored or plugin skill", func(ctx context.Context, e *env, a []string) int { return runEnable(ctx, e, a, true) }}
	commands["disable"] = command{"disable a stored or plugin skill", func(ctx context.Context, e *env, a []string) int { return runEnable(ctx, e, a, false) }}
}

// storeFlags are the flags of commands that work on the store.
type storeFlags struct {
	catalogFlags
}

func (s *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.config, "config", "", "config `file` (for its \"store\", \"storeLimits\" and plugins; default: $LOADOUT_CONFIG, else ./loadout.json if present)")
	fs.StringVar(&s.db, "db", "", "store: a SQLite `file` or a postgres:// URL (default: $LOADOUT_DB, the config's \"store\", else loadout.db beside the config or here)")
}

// run parses args, wants exactly nargs arguments, opens the store (mode
// says whether it may be created) and calls fn with it.
func (s *storeFlags) run(ctx context.Context, e *env, fs *flag.FlagSet, args []string, nargs int, mode openMode, fn func(store.Store) int) int {
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, nargs); err != nil {
		return fail(e, err)
	}
	st, _, _, err := s.openStoreOnly(ctx, e, mode)
	if err != nil {
		return fail(e, err)
	}
	defer st.Close()
	return fn(st)
}

// openStoreOnly opens the store the flags name (resolve's rule), and says
// which on stderr. With mayCreate a missing SQLite file is created.
func (s *storeFlags) openStoreOnly(ctx context.Context, e *env, mode openMode) (store.Store, *config.File, string, error) {
	f, dsn, _, err := s.resolve(e)
	if err != nil {
		return nil, nil, "", err
	}
	st, err := openStore(ctx, dsn, f, mode)
	if err != nil {
		return nil, nil, dsn, err
	}
	using(e, f, dsn)
	return st, f, dsn, nil
}

func limitsOf(f *config.File) skill.Limits {
	if f == nil {
		return skill.Limits{}
	}
	l := f.StoreLimits
	return skill.Limits{MaxFileSize: l.MaxFileSize, MaxTotalSize: l.MaxTotalSize, MaxFiles: l.MaxFiles, WarnTextSize: l.WarnTextSize}
}

func runImport(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var asJSON, partial bool
	fs := newFlags(e, "import", "[--db D] [--config F] [--json] [--partial] SOURCE...",
		"Imports skills into the store. A SOURCE is a skill folder (or a folder of skill folders),\na .json file (portable format v1 or v2, one document or an array) or a .zip (a folder with\nSKILL.md, or one such folder per skill; the limits of POST /v1/import and the UI, by\nthe config's storeLimits). Each skill is reported as created, updated, unchanged or refused\n(with why). An import is all or nothing: when any skill is refused, none is written and\nthe others are reported as skipped; --partial writes the accepted ones anyway. What is\nwritten is written in one transaction. Exits 1 when anything was refused.")
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	fs.BoolVar(&partial, "partial", false, "when some skills are refused, import the accepted ones anyway (default: all or nothing)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		return fail(e, wantArgs(fs, 1)) // one line: missing SOURCE
	}
	st, f, dsn, err := sf.openStoreOnly(ctx, e, mayCreate)
	if err != nil {
		return fail(e, err)
	}
	defer st.Close()
	ctx = cliDraft(ctx, e, f) // with review required, the imports are drafts
	var items []store.ImportItem
	for _, src := range fs.Args() {
		read := readSource(ctx, src, portable.LimitsFor(limitsOf(f)))
		if rest, ok := strings.CutPrefix(src, "remote:"); ok {
			read = readRemote(ctx, e, f, dsn, rest)
		}
		for _, b := range read {
			items = append(items, store.ImportItem{Bundle: b.bundle, Err: b.err, Source: "import", Provenance: b.provenance, Limits: limitsOf(f)})
		}
	}
	var results []store.ImportResult
	if partial {
		results, err = store.ImportPartial(ctx, st, items)
	} else {
		results, err = st.Import(ctx, items)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "loadout: import failed, nothing was changed: %s\n", termText(err.Error()))
		return 1
	}
	refused, skipped := 0, 0
	for _, r := range results {
		switch r.Action {
		case store.ActionRefused:
			refused++
		case store.ActionSkipped:
			skipped++
		}
	}
	if asJSON {
		type row struct {
			Name       string             `json:"name,omitempty"`
			Action     string             `json:"action"`
			Version    int                `json:"version,omitempty"`
			Provenance string             `json:"provenance,omitempty"`
			Error      string             `json:"error,omitempty"`
			Problems   []skill.Diagnostic `json:"problems,omitempty"`
		}
		rows := []row{}
		for _, r := range results {
			rr := row{Name: r.Name, Action: r.Action, Version: r.Version, Provenance: r.Provenance, Problems: r.Problems}
			if r.Error != nil {
				rr.Error = r.Error.Error()
			}
			rows = append(rows, rr)
		}
		writeJSON(e.stdout, map[string]any{"store": dsn, "partial": partial, "results": rows})
	} else {
		for _, r := range results {
			switch r.Action {
			case store.ActionRefused, store.ActionSkipped:
				fmt.Fprintf(e.stdout, "%-10s %s (%s): %s\n", r.Action, termText(orDash(r.Name)), termText(r.Provenance), termText(fmt.Sprint(r.Error)))
				if r.Action == store.ActionRefused {
					for _, p := range r.Problems {
						fmt.Fprintf(e.stdout, "             - %s\n", termText(p.String()))
					}
				}
			default:
				fmt.Fprintf(e.stdout, "%-10s %s v%d (%s)\n", r.Action, termText(r.Name), r.Version, termText(r.Provenance))
			}
		}
		switch {
		case refused == 0:
			fmt.Fprintf(e.stdout, "%s imported into %s\n", plural(len(results), "skill", "skills"), dsn)
		case partial:
			fmt.Fprintf(e.stdout, "%s imported into %s, %d refused (--partial)\n", plural(len(results)-refused, "skill", "skills"), dsn, refused)
		default:
			fmt.Fprintf(e.stdout, "nothing imported into %s: %d refused, %d skipped", dsn, refused, skipped)
			if skipped > 0 {
				fmt.Fprint(e.stdout, " (fix the refused ones, or pass --partial to import the others)")
			}
			fmt.Fprintln(e.stdout)
		}
	}
	if refused > 0 {
		return 1
	}
	return 0
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sourced is one item read from an import source: a bundle, or why it
// could not be read.
type sourced struct {
	bundle     *skill.Bundle
	err        error
	provenance string
}

// readSource reads one import source into items: a .json file (one document
// or an array, each document its own item), a .zip file, a skill folder,
// or a folder of skill folders (found as discovery finds them).
// readRemote reads the skills of remote source ID (or one of them,
// ID/NAME) from its pinned snapshot, for an import: a copy into the store
// whose provenance is the source's URL, ref, revision and folder.
func readRemote(ctx context.Context, e *env, f *config.File, dsn, arg string) []sourced {
	id, name, _ := strings.Cut(arg, "/")
	refused := func(err error) []sourced { return []sourced{{err: err, provenance: "remote:" + arg}} }
	m, _, err := newRemotes(e.getenv, f, dsn, source.Options{})
	if err != nil {
		return refused(err)
	}
	if m == nil {
		return refused(errors.New("remote:" + arg + ": the config has no remote sources ({\"git\": URL} or {\"index\": URL} in an agent's skills)"))
	}
	var ids []string
	for _, s := range m.Specs() {
		ids = append(ids, s.ID)
	}
	if !slices.Contains(ids, id) {
		return refused(fmt.Errorf("remote:%s: no remote source %q; the config's are %s", arg, id, strings.Join(ids, ", ")))
	}
	for _, d := range m.Open(ctx, false, id) {
		if d.Severity == skill.Error {
			return refused(errors.New(d.Message))
		}
	}
	sks, _ := m.Skills(id)
	var out []sourced
	for _, sk := range sks {
		if name != "" && sk.Name != name {
			continue
		}
		b, err := portable.ImportDir(sk.Dir)
		out = append(out, sourced{b, err, sk.Origin.Kind + " " + sk.Origin.RemoteText()})
	}
	if len(out) == 0 {
		return refused(fmt.Errorf("remote:%s: source %s has no skill named %q at its pin", arg, id, name))
	}
	return out
}

func readSource(ctx context.Context, src string, lim portable.ImportLimits) []sourced {
	refused := func(err error) []sourced { return []sourced{{err: err, provenance: src}} }
	abs, err := filepath.Abs(src)
	if err != nil {
		return refused(err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return refused(fmt.Errorf("%s: %w", src, err))
	}
	switch {
	case st.IsDir():
		if _, err := os.Stat(filepath.Join(abs, "SKILL.md")); err == nil {
			b, err := portable.ImportDir(abs)
			return []sourced{{b, err, abs}}
		}
		res := source.ScanFolder(ctx, abs, source.Options{})
		var out []sourced
		for _, d := range res.Diagnostics {
			if d.Severity == skill.Error {
				prov := abs
				if filepath.IsAbs(d.Path) {
					prov = d.Path
					if filepath.Base(prov) == "SKILL.md" {
						prov = filepath.Dir(prov)
					}
				}
				out = append(out, sourced{err: errors.New(d.String()), provenance: prov})
			}
		}
		for _, sk := range res.Skills {
			b, err := portable.ImportDir(sk.Dir)
			out = append(out, sourced{b, err, sk.Dir})
		}
		if len(out) == 0 {
			return refused(fmt.Errorf("%s: no skills found (no folder below it holds a SKILL.md)", src))
		}
		return out
	case strings.EqualFold(filepath.Ext(abs), ".zip"), strings.EqualFold(filepath.Ext(abs), ".json"):
		// Read as POST /v1/import and the UI read an uploaded file, with
		// the same limits (portable.LimitsFor of the store's).
		if st.Size() > lim.MaxUploadBytes {
			return refused(portable.TooLargeError(abs, st.Size(), lim))
		}
		f, err := os.Open(abs)
		if err != nil {
			return refused(err)
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, lim.MaxUploadBytes+1))
		if err != nil {
			return refused(fmt.Errorf("%s: %w", src, err))
		}
		if int64(len(data)) > lim.MaxUploadBytes { // grew since the stat
			return refused(portable.TooLargeError(abs, -1, lim))
		}
		kind := portable.KindJSON
		if strings.EqualFold(filepath.Ext(abs), ".zip") {
			kind = portable.KindZip
		}
		ups, err := portable.ReadUpload(abs, kind, data, lim)
		if err != nil {
			return refused(err)
		}
		var out []sourced
		for _, up := range ups {
			out = append(out, sourced{up.Bundle, up.Err, up.From})
		}
		if len(out) == 0 {
			return refused(fmt.Errorf("%s: an empty array: no skills to import", src))
		}
		return out
	}
	return refused(fmt.Errorf("%s: not a folder, .json or .zip: give a skill folder, a portable JSON file or a zip", src))
}

func runExport(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var format, out string
	var version int
	fs := newFlags(e, "export", "[--db D] [--config F] NAME --format json|zip|dir --out PATH [--version N]",
		"Exports a skill: from the store (any version), or else any skill of the configured\nfolders and plugins, with its source and trust in the metadata.")
	sf.register(fs)
	fs.StringVar(&format, "format", "json", "json, zip or dir")
	fs.StringVar(&out, "out", "", "where to write (a file for json and zip, a new folder for dir; - for stdout)")
	fs.IntVar(&version, "version", 0, "stored version to export (default: the current one)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 1); err != nil {
		return fail(e, err)
	}
	if out == "" {
		return fail(e, errors.New("export: give --out PATH (a file, a new folder for --format dir, or - for stdout)"))
	}
	name := fs.Arg(0)
	b, origin, err := exportBundle(ctx, e, &sf, name, version)
	if err != nil {
		fmt.Fprintf(e.stderr, "loadout: %v\n", err)
		return 1
	}
	switch format {
	case "json":
		data, err := portable.ExportJSON(b, portable.ExportMeta{ExportedAt: time.Now().UTC(), ExportedFrom: "loadout", Origin: origin})
		if err != nil {
			return fail(e, err)
		}
		err = writeOut(e, out, data)
		if err != nil {
			return fail(e, err)
		}
	case "zip":
		var buf bytes.Buffer
		if err := portable.ExportZip(&buf, name, b); err != nil {
			return fail(e, err)
		}
		if err := writeOut(e, out, buf.Bytes()); err != nil {
			return fail(e, err)
		}
	case "dir":
		if err := portable.ExportDir(out, b); err != nil {
			return fail(e, err)
		}
	default:
		return fail(e, fmt.Errorf("--format %q: use json, zip or dir", format))
	}
	if out != "-" {
		fmt.Fprintf(e.stderr, "exported %s (%s, %s) to %s\n", name, b.Digest(), plural(len(b.Files)+1, "file", "files"), out)
	}
	return 0
}

// exportBundle finds NAME in the store, else in the configured catalog.
func exportBundle(ctx context.Context, e *env, sf *storeFlags, name string, version int) (*skill.Bundle, *skill.Origin, error) {
	f, dsn, explicit, err := sf.resolve(e)
	if err != nil {
		return nil, nil, err
	}
	if explicit || storeExists(dsn) {
		st, err := openStore(ctx, dsn, f, readOnly)
		if err != nil {
			return nil, nil, err
		}
		defer st.Close()
		b, rec, err := st.Bundle(ctx, name, version)
		if err == nil || f == nil {
			// Else the catalog's open below says which config and store.
			using(e, f, dsn)
		}
		if err == nil {
			return b, &skill.Origin{Kind: "store", Version: rec.Version, Provenance: rec.Provenance}, nil
		}
		if store.ErrorCode(err) != "not_found" || version != 0 {
			return nil, nil, err
		}
	}
	if f == nil {
		return nil, nil, fmt.Errorf("no stored skill %q in %s, and no config to look further", name, dsn)
	}
	sess, err := sf.catalogFlags.open(ctx, e, false)
	if err != nil {
		return nil, nil, err
	}
	defer sess.close()
	en, ok := sess.cat.Global().Lookup(name)
	if !ok {
		return nil, nil, fmt.Errorf("no skill %q in the store or the configured sources", name)
	}
	b, err := en.Skill.Bundle()
	if err != nil {
		return nil, nil, err
	}
	if _, _, err := b.Check(skill.Limits{}); err != nil {
		return nil, nil, fmt.Errorf("skill %q cannot be exported: %w", name, err)
	}
	o := en.Skill.OriginValue()
	return b, &o, nil
}

func writeOut(e *env, out string, data []byte) error {
	if out == "-" {
		_, err := e.stdout.Write(data)
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

func runVersions(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var asJSON bool
	fs := newFlags(e, "versions", "[--db D] [--json] NAME", "Lists a stored skill's versions, newest first.")
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	return sf.run(ctx, e, fs, args, 1, readOnly, func(st store.Store) int {
		return listVersions(ctx, e, st, fs.Arg(0), asJSON)
	})
}

func listVersions(ctx context.Context, e *env, st store.Store, name string, asJSON bool) int {
	vs, err := st.Versions(ctx, name)
	if err != nil {
		fmt.Fprintf(e.stderr, "loadout: %v\n", err)
		return 1
	}
	if asJSON {
		writeJSON(e.stdout, map[string]any{"name": name, "versions": vs})
		return 0
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tCREATED\tFILES\tSIZE\tDIGEST\tSOURCE\tNOTE")
	for _, v := range vs {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\n", v.Version, v.CreatedAt.UTC().Format(time.RFC3339), v.Files, v.Size, v.Digest, v.Source, v.Note)
	}
	tw.Flush()
	return 0
}

func runRestore(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	fs := newFlags(e, "restore", "[--db D] NAME VERSION", "Makes an earlier version current again, as a new version (history is never rewritten).")
	sf.register(fs)
	return sf.run(ctx, e, fs, args, 2, readOnly, func(st store.Store) int {
		v, err := strconv.Atoi(fs.Arg(1))
		if err != nil || v <= 0 {
			return fail(e, fmt.Errorf("VERSION %q: give a version number from 'loadout versions %s'", fs.Arg(1), fs.Arg(0)))
		}
		rec, err := st.Restore(ctx, fs.Arg(0), v, -1)
		if err != nil {
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		fmt.Fprintf(e.stdout, "restored %s to the content of version %d as version %d (%s)\n", rec.Name, v, rec.Version, rec.Digest)
		return 0
	})
}

func runEnable(ctx context.Context, e *env, args []string, on bool) int {
	var sf storeFlags
	verb := map[bool]string{true: "enable", false: "disable"}[on]
	fs := newFlags(e, verb, "[--db D] NAME | plugin:ID/NAME",
		"Enables or disables a stored skill (NAME) or a plugin skill (plugin:ID/NAME). A disabled\nskill is in no agent's loadout; the setting is kept in the store.")
	sf.register(fs)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 1); err != nil {
		return fail(e, err)
	}
	key := fs.Arg(0)
	if strings.HasPrefix(key, "plugin:") {
		// Only a key of a configured plugin's skill is written: an override
		// for anything else would be kept and never apply.
		f, _, _, err := sf.resolve(e)
		if err != nil {
			return fail(e, err)
		}
		if err := checkPluginKey(f, key); err != nil {
			fmt.Fprintf(e.stderr, "loadout: %s: %v\n", verb, err)
			return 1
		}
	}
	st, _, _, err := sf.openStoreOnly(ctx, e, mayCreate)
	if err != nil {
		return fail(e, err)
	}
	defer st.Close()
	if strings.HasPrefix(key, "plugin:") {
		err = st.SetOverride(ctx, key, on)
	} else {
		err = st.SetEnabled(ctx, key, on)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "loadout: %v\n", err)
		return 1
	}
	fmt.Fprintf(e.stdout, "%sd %s\n", verb, key)
	return 0
}

// checkPluginKey accepts key only when it names a skill of a configured
// plugin (plugin:ID/NAME, as 'loadout plugins' lists them).
func checkPluginKey(f *config.File, key string) error {
	if f == nil || len(f.Plugins) == 0 {
		return fmt.Errorf("%q: no plugins are configured (list plugin folders under \"plugins\" in loadout.json, or pass --config FILE)", key)
	}
	plugins, _ := plugin.LoadAll(f.Plugins)
	var keys []string
	for _, p := range plugins {
		for _, ps := range p.Skills {
			if ps.Key == key {
				return nil
			}
			keys = append(keys, ps.Key)
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%q: the configured plugins have no skills", key)
	}
	sort.Strings(keys)
	if len(keys) > 5 {
		keys = append(keys[:5], "…")
	}
	return fmt.Errorf("no plugin skill %q in %s: keys are %s ('loadout plugins' lists them all)", key, f.Path, strings.Join(keys, ", "))
}
