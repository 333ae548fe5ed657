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
	"sync"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/textdist"
	"github.com/loadout/loadout/service"
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
	// typedMeta: folder skills keep only their typed frontmatter fields
	// (source.Options.TypedMeta), for commands that print nothing else.
	typedMeta bool
	// sharedMeta: folder skills keep only the frontmatter fields a catalog
	// reads to list and check them, shared (source.Options.SharedMeta),
	// for prompt and check, which print no tag or version.
	sharedMeta bool
	// noFiles: folder skills keep no file manifest (source.Options.NoFiles),
	// for prompt, which prints the listing alone.
	noFiles bool
	// releaseFiles: folder skills drop their file manifests once the
	// safety checks have read them (catalog.Options.ReleaseFiles), for
	// check, which prints the report alone.
	releaseFiles bool
}

func (c *catalogFlags) register(fs *flag.FlagSet, withAgent bool) {
	fs.StringVar(&c.config, "config", "", "config `file` (default: $LOADOUT_CONFIG, else ./loadout.json if present)")
	if withAgent {
		fs.StringVar(&c.agent, "agent", "", "agent `id` from the config")
	}
	fs.Var(&c.roots, "root", "skills `folder` to scan (repeatable); used instead of an agent's sources")
	fs.StringVar(&c.db, "db", "", "store: a SQLite `file` or a postgres:// URL (default: $LOADOUT_DB, the config's \"store\", else loadout.db beside the config)")
}

// flagMeta is what newFlags knows about a command beyond its FlagSet: the
// synopsis and description its help prints, and where help is printed.
type flagMeta struct {
	args, about string
	out         io.Writer
}

// flagMetas maps each FlagSet newFlags made to its flagMeta (a FlagSet has
// no room for it). A CLI process makes a handful.
var flagMetas sync.Map

// newFlags makes a FlagSet whose help (on --help, to the command's stderr)
// spells flags --flag and lists every flag in its usage line. The flag
// package prints nothing itself: parseFlags turns its errors into one line.
func newFlags(e *env, name, args, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	m := &flagMeta{args: args, about: about, out: e.stderr}
	fs.Usage = func() { printUsage(m.out, fs, m) }
	flagMetas.Store(fs, m)
	return fs
}

func metaOf(fs *flag.FlagSet) *flagMeta {
	if m, ok := flagMetas.Load(fs); ok {
		return m.(*flagMeta)
	}
	return &flagMeta{}
}

// usageLine is "loadout NAME" and the synopsis, with every flag the
// synopsis leaves out put before it, so the line lists every flag.
func usageLine(fs *flag.FlagSet, m *flagMeta) string {
	var extra []string
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(" "+m.args, "--"+f.Name+" ") && !strings.Contains(" "+m.args+" ", "--"+f.Name+"]") &&
			!strings.HasSuffix(m.args, "--"+f.Name) && !strings.Contains(m.args, "--"+f.Name+".") {
			extra = append(extra, "["+flagSpelling(f)+"]")
		}
	})
	parts := append([]string{"loadout", fs.Name()}, extra...)
	if m.args != "" {
		parts = append(parts, m.args)
	}
	return strings.Join(parts, " ")
}

// flagSpelling is "--name VALUE", or "--name" for a boolean flag.
func flagSpelling(f *flag.Flag) string {
	v, _ := flag.UnquoteUsage(f)
	switch v {
	case "":
		return "--" + f.Name
	case "int", "uint", "int64", "uint64":
		v = "N"
	case "string", "value":
		v = "VALUE"
	}
	return "--" + f.Name + " " + strings.ToUpper(v)
}

// printUsage is the help of a command: the usage line, the description,
// then each flag as flag.PrintDefaults would, but spelt --flag.
func printUsage(w io.Writer, fs *flag.FlagSet, m *flagMeta) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", usageLine(fs, m), m.about)
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\nFlags:\n")
	printFlagDefaults(w, fs)
}

// printFlagDefaults is flag.PrintDefaults with flags spelt --flag.
func printFlagDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		line := "  " + flagSpelling(f)
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		if d := f.DefValue; d != "" && d != "0" && d != "false" && d != "[]" && !strings.Contains(usage, "default") {
			usage += " (default " + d + ")"
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, usage)
	})
}

// helpHint is how to get a command's help, for the end of an error line.
func helpHint(fs *flag.FlagSet) string {
	if strings.Contains(fs.Name(), " ") {
		return "run 'loadout " + fs.Name() + " --help'"
	}
	return "run 'loadout help " + fs.Name() + "'"
}

// maxFlagTypos is the most edits between a mistyped flag and a suggestion
// (as maxCommandTypos for commands).
const maxFlagTypos = 2

// closestFlag is the command's flag nearest to name within maxFlagTypos
// edits (or having name as a prefix), or "".
func closestFlag(fs *flag.FlagSet, name string) string {
	best, bestD := "", maxFlagTypos+1
	fs.VisitAll(func(f *flag.Flag) {
		d := textdist.Levenshtein(strings.ToLower(name), f.Name)
		if len(name) >= 3 && strings.HasPrefix(f.Name, strings.ToLower(name)) {
			d = min(d, 1)
		}
		if d < bestD && d < len(f.Name) {
			best, bestD = f.Name, d
		}
	})
	return best
}

// flagError rewrites an error of flag.FlagSet.Parse as one line for a
// person: flags spelt --flag, the closest flag for an unknown one, and how
// to get help.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	const undefined = "flag provided but not defined: -"
	if name, ok := strings.CutPrefix(msg, undefined); ok {
		msg = "unknown flag --" + name
		if s := closestFlag(fs, name); s != "" {
			msg += " (did you mean --" + s + "?)"
		}
	} else {
		// "flag needs an argument: -budget", "invalid value "x" for flag -budget: ..."
		for _, p := range []string{"argument: -", "for flag -"} {
			msg = strings.Replace(msg, p, p+"-", 1)
		}
	}
	return fmt.Sprintf("loadout %s: %s; %s", fs.Name(), msg, helpHint(fs))
}

// parseFlags parses args, allowing flags after positional arguments (as
// people type them: loadout read NAME PATH --json); "--" ends the flags.
// A bad flag is one error line on stderr (nothing else); --help prints the
// command's help. It returns -1 to continue, else an exit code.
func parseFlags(fs *flag.FlagSet, args []string) int {
	var positional []string
	// The flag package calls Usage on every error and on --help: print it
	// here, once and only when asked.
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return 0
			}
			fmt.Fprintln(metaOf(fs).errOut(), flagError(fs, err))
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

func (m *flagMeta) errOut() io.Writer {
	if m.out == nil {
		return io.Discard
	}
	return m.out
}

// argNames are the positional arguments a synopsis names (NAME, PATH,
// VERSION...): its upper-case words outside brackets that are not a
// flag's value.
func argNames(args string) []string {
	var names []string
	depth, afterFlag := 0, false
	for _, w := range strings.Fields(args) {
		open := strings.Count(w, "[")
		if depth == 0 && open == 0 && !afterFlag {
			t := strings.TrimSuffix(w, "...")
			if t != "" && strings.ToUpper(t) == t && strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == "" {
				names = append(names, t)
			}
		}
		afterFlag = depth == 0 && open == 0 && strings.HasPrefix(w, "--")
		depth += open - strings.Count(w, "]")
	}
	return names
}

// wantArgs refuses, in one line, a number of positional arguments other
// than n: none is ever ignored, and a missing one is named.
func wantArgs(fs *flag.FlagSet, n int) error {
	if fs.NArg() == n {
		return nil
	}
	if fs.NArg() > n {
		return fmt.Errorf("%s: unexpected argument %q (it takes %d); %s", fs.Name(), fs.Arg(n), n, helpHint(fs))
	}
	m := metaOf(fs)
	if names := argNames(m.args); len(names) == n {
		return fmt.Errorf("%s: missing %s (usage: %s); %s", fs.Name(), strings.Join(names[fs.NArg():], " and "), usageLine(fs, m), helpHint(fs))
	}
	return fmt.Errorf("%s: missing argument (it takes %d, got %d); %s", fs.Name(), n, fs.NArg(), helpHint(fs))
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
// and exists; these commands only read and create nothing, so a SQLite
// store not created yet holds no skills, however it is named.
func (c *catalogFlags) open(ctx context.Context, e *env, needAgent bool) (*session, error) {
	f, dsn, explicit, err := c.resolve(e)
	if err != nil {
		return nil, err
	}
	specs, opts := c.agentSpecs(f)
	opts.Scan.TypedMeta = c.typedMeta
	opts.Scan.SharedMeta = c.sharedMeta
	opts.Scan.NoFiles = c.noFiles
	opts.ReleaseFiles = c.releaseFiles
	opts.Once = true // these commands read the catalog once
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
	case wantStore && !storeExists(dsn):
		// A store never created holds no skills, whether the config
		// names it ("store": "loadout.db") or not (naming the
		// default made check exit 2 before the first serve).
		opts.Store = catalog.ProviderFunc(func(context.Context) ([]*skill.Skill, []skill.Diagnostic) { return nil, nil })
		shown = dsn + " (not created yet: no stored skills)"
	case wantStore:
		st, err := openStore(ctx, dsn, f, readOnly)
		if err != nil {
			return nil, err
		}
		sess.store = st
		opts.Store = storeProvider(st)
		opts.Pins = service.StorePins(st)
		shown = dsn
	}
	using(e, f, shown)
	var pluginDiags []skill.Diagnostic
	if f != nil && len(f.Plugins) > 0 {
		opts.Plugins, opts.PluginOrder, pluginDiags = pluginProviders(ctx, f.Plugins, sess.store)
	}
	// Remote sources are read at their pins; these commands never move a
	// pin or write the lock (`loadout sync` does).
	m, remoteDiags, err := newRemotes(e.getenv, f, dsn, opts.Scan)
	if err != nil {
		sess.close()
		return nil, err
	}
	if m != nil {
		m.Open(ctx, false) // what it reports comes with each source's skills
		opts.Remotes = remoteProviders(m)
	}
	pluginDiags = append(pluginDiags, remoteDiags...)
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

// printDiagnostics prints diagnostics() without putting them together
// first: at 50,000 skills with a finding each the copy was up to 11 MB.
func (s *session) printDiagnostics(w io.Writer) {
	printDiags(w, s.cat.Added())
	printDiags(w, s.l.Diagnostics())
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
	if e.logJSON {
		failJSON(e, err)
		return 2
	}
	fmt.Fprintf(e.stderr, "loadout: %s\n", termText(err.Error()))
	return 2
}

func printDiags(w io.Writer, diags []skill.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintln(w, termText(d.String()))
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
