package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// catalogFlags are the flags every catalog command shares.
type catalogFlags struct {
	config string
	agent  string
	db     string
	roots  listFlag
	json   bool
	// missingRootIsDiag: a --root that does not exist is reported as an
	// error diagnostic (check, whose output CI reads) rather than refused.
	missingRootIsDiag bool
}

func (c *catalogFlags) register(fs *flag.FlagSet, withAgent bool) {
	fs.StringVar(&c.config, "config", "", "config `file` (default: $LOADOUT_CONFIG, else ./loadout.json if present)")
	if withAgent {
		fs.StringVar(&c.agent, "agent", "", "agent `id` from the config")
	}
	fs.Var(&c.roots, "root", "skills `folder` to scan (repeatable); used instead of an agent's sources")
	fs.StringVar(&c.db, "db", "", "store: a SQLite `file` or a postgres:// URL (default: $LOADOUT_DB, the config's \"store\", else loadout.db beside the config)")
}

// newFlags makes a FlagSet that prints its usage on the command's stderr.
func newFlags(e *env, name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: loadout %s %s\n\n%s\n\nFlags:\n", name, args, about)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments (as
// people type them: loadout read NAME PATH --json); "--" ends the flags.
// It returns -1 to continue, else an exit code.
func parseFlags(fs *flag.FlagSet, args []string) int {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	fs.Parse(append([]string{"--"}, positional...))
	return -1
}

// wantArgs refuses, in one line, a number of positional arguments other
// than n: none is ever ignored.
func wantArgs(fs *flag.FlagSet, n int) error {
	if fs.NArg() == n {
		return nil
	}
	if fs.NArg() > n {
		return fmt.Errorf("%s: unexpected argument %q (it takes %d); see 'loadout %s --help'", fs.Name(), fs.Arg(n), n, fs.Name())
	}
	return fmt.Errorf("%s: missing argument (it takes %d, got %d); see 'loadout %s --help'", fs.Name(), n, fs.NArg(), fs.Name())
}

// folderArgs takes the positional arguments as --root folders (serve,
// mcp, check, list, prompt: loadout check ./skills).
func (c *catalogFlags) folderArgs(fs *flag.FlagSet) {
	c.roots = append(c.roots, fs.Args()...)
}

// folderArgsHelp is the sentence each of those commands' help has.
const folderArgsHelp = "\nA FOLDER argument is the same as --root FOLDER (loadout %s ./skills)."

// rootsAgent is the id of the agent made from --root flags.
const rootsAgent = "roots"

// session is what a catalog command works on. close releases the store.
type session struct {
	cfg   *config.File
	cat   *catalog.Catalog
	l     *catalog.Loadout
	store store.Store
}

func (s *session) close() {
	if s.store != nil {
		s.store.Close()
	}
}

// run parses args, wants exactly nargs arguments, opens the session and
// calls fn with it.
func (c *catalogFlags) run(ctx context.Context, e *env, fs *flag.FlagSet, args []string, nargs int, needAgent bool, fn func(*session) int) int {
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, nargs); err != nil {
		return fail(e, err)
	}
	sess, err := c.open(ctx, e, needAgent)
	if err != nil {
		return fail(e, err)
	}
	defer sess.close()
	return fn(sess)
}

// loadConfig reads the config by the one rule every command follows:
// --config, else $LOADOUT_CONFIG, else ./loadout.json when it exists and
// no --root is given (--root folders are then the whole catalog). Every
// --root must be an existing folder (check reports it as an error
// diagnostic instead).
func (c *catalogFlags) loadConfig(e *env) (*config.File, error) {
	if !c.missingRootIsDiag {
		for _, r := range c.roots {
			fi, err := os.Stat(r)
			if err != nil {
				return nil, fmt.Errorf("--root %s: no such folder (a FOLDER argument is a --root too)", r)
			}
			if !fi.IsDir() {
				return nil, fmt.Errorf("--root %s: not a folder; give the folder that holds the skills", r)
			}
		}
	}
	path := c.config
	if path == "" {
		path = e.getenv("LOADOUT_CONFIG")
	}
	if path == "" && len(c.roots) == 0 {
		if _, err := os.Stat(config.DefaultName); err == nil {
			path = config.DefaultName
		}
	}
	if path == "" {
		return nil, nil
	}
	return config.Load(path)
}

// resolve is the start-up every command shares: the config and the store
// (see loadConfig and storeDSN for the rules).
func (c *catalogFlags) resolve(e *env) (f *config.File, dsn string, explicit bool, err error) {
	f, err = c.loadConfig(e)
	if err != nil {
		return nil, "", false, err
	}
	dsn, explicit, err = storeDSN(e, c.db, f)
	return f, dsn, explicit, err
}

// open builds the catalog the flags describe and picks the loadout:
// --root folders (an agent of their own), else the config's agent, else
// the config's global catalog. The store is opened when something names
// it (--db, $LOADOUT_DB, "store" in the config, a {"store": true} source)
// and exists; these commands only read, so a store named but missing is an
// error and a {"store": true} source without its file holds no skills.
func (c *catalogFlags) open(ctx context.Context, e *env, needAgent bool) (*session, error) {
	f, dsn, explicit, err := c.resolve(e)
	if err != nil {
		return nil, err
	}
	specs, opts := c.agentSpecs(f)
	if len(c.roots) > 0 && c.agent == "" {
		c.agent = rootsAgent
	}
	if f == nil && len(c.roots) == 0 && c.db == "" && e.getenv("LOADOUT_DB") == "" {
		return nil, errors.New("no skills to work on: pass --config FILE, --root DIR or --db STORE, or run where a loadout.json is")
	}
	sess := &session{cfg: f}
	wantStore := explicit || usesStore(specs)
	if !wantStore && f != nil && !config.IsPostgres(dsn) && storeExists(dsn) {
		wantStore = true
	}
	shown := ""
	switch {
	case wantStore && !explicit && !storeExists(dsn):
		// A {"store": true} source whose store was never created: empty.
		opts.Store = catalog.ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return nil, nil })
		shown = dsn + " (not created yet: no stored skills)"
	case wantStore:
		st, err := openStore(ctx, dsn, f, readOnly)
		if err != nil {
			return nil, err
		}
		sess.store = st
		opts.Store = storeProvider(st)
		shown = dsn
	}
	using(e, f, shown)
	var pluginDiags []skill.Diagnostic
	if f != nil && len(f.Plugins) > 0 {
		opts.Plugins, opts.PluginOrder, pluginDiags = pluginProviders(ctx, f.Plugins, sess.store)
	}
	if f == nil && len(c.roots) == 0 {
		// Only a store: the global catalog is the store.
		specs = nil
	}
	cat, err := catalog.New(ctx, specs, opts)
	if err != nil {
		sess.close()
		return nil, err
	}
	sess.cat = cat
	cat.AddDiagnostics(pluginDiags)
	id := c.agent
	if id == "" {
		if needAgent {
			sess.close()
			if len(cat.AgentIDs()) == 0 {
				return nil, errors.New("--agent is required, and there are no agents: pass --config FILE (with agents) or --root DIR")
			}
			return nil, fmt.Errorf("--agent is required: one of %s", strings.Join(cat.AgentIDs(), ", "))
		}
		id = catalog.GlobalID
	}
	l, ok := cat.Agent(id)
	if !ok {
		sess.close()
		where := "the store"
		switch {
		case f != nil:
			where = f.Path
		case len(c.roots) > 0:
			where = "--root folders (their agent is \"" + rootsAgent + "\")"
		}
		ids := cat.AgentIDs()
		if len(ids) == 0 {
			return nil, fmt.Errorf("no agent %q in %s: it has no agents; leave out --agent, or pass --config FILE", id, where)
		}
		return nil, fmt.Errorf("no agent %q in %s: agents are %s", id, where, strings.Join(ids, ", "))
	}
	sess.l = l
	return sess, nil
}

// diagnostics are what a command about one loadout reports: problems
// outside the sources (plugin manifests), then the loadout's own.
func (s *session) diagnostics() []skill.Diagnostic {
	return append(append([]skill.Diagnostic(nil), s.cat.Added()...), s.l.Diagnostics()...)
}

// agentSpecs are the config's agents, plus one agent named "roots" for the
// --root folders (relative to the working folder), and the config's
// catalog options.
func (c *catalogFlags) agentSpecs(f *config.File) ([]catalog.AgentSpec, catalog.Options) {
	var specs []catalog.AgentSpec
	var opts catalog.Options
	if f != nil {
		specs, opts = f.Agents, f.CatalogOptions()
	}
	if len(c.roots) > 0 {
		cwd, _ := os.Getwd()
		spec := catalog.AgentSpec{AgentID: rootsAgent, DisplayName: "--root folders"}
		for _, r := range c.roots {
			spec.Skills = append(spec.Skills, catalog.SourceSpec{Root: config.Resolve(cwd, r)})
		}
		specs = append(specs, spec)
	}
	return specs, opts
}

func usesStore(specs []catalog.AgentSpec) bool {
	for _, a := range specs {
		for _, s := range a.Skills {
			if s.Store {
				return true
			}
		}
	}
	return false
}

// fail prints an error for a person and returns the usage/config exit code.
func fail(e *env, err error) int {
	fmt.Fprintf(e.stderr, "loadout: %v\n", err)
	return 2
}

func printDiags(w io.Writer, diags []skill.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintln(w, d.String())
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// diagsOrEmpty keeps JSON output an array, never null.
func diagsOrEmpty(d []skill.Diagnostic) []skill.Diagnostic {
	if d == nil {
		return []skill.Diagnostic{}
	}
	return d
}
