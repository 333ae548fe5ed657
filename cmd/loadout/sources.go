package main

import (
	"context"
	"fmt"
	"github.com/loadout/loadout/safety"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/plugin"
	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// storeDSN picks the store, by the one rule every command follows: --db,
// then $LOADOUT_DB, then the config's "store", then loadout.db beside the
// config (or in the working folder). explicit says whether anything named
// it. A URL of another kind than postgres:// is an error, never a file.
func storeDSN(e *env, flagDB string, f *config.File) (dsn string, explicit bool, err error) {
	cwd, _ := os.Getwd()
	var named, what string
	switch {
	case flagDB != "":
		named, what = flagDB, "--db"
	case e.getenv("LOADOUT_DB") != "":
		named, what = e.getenv("LOADOUT_DB"), "$LOADOUT_DB"
	case f != nil:
		if err := checkStoreForm(f.Store); err != nil {
			return "", false, fmt.Errorf("%s: \"store\": %v", f.Path, err)
		}
		return f.StoreDSN(), f.Store != "", nil
	default:
		return config.ResolveStore(cwd, ""), false, nil
	}
	if err := checkStoreForm(named); err != nil {
		return "", true, fmt.Errorf("%s: %v", what, err)
	}
	return config.ResolveStore(cwd, named), true, nil
}

// checkStoreForm refuses a store setting that is a URL of a kind loadout
// cannot open (mysql://…, sqlite://…): it would otherwise be taken for a
// file path and create a folder named after the scheme.
func checkStoreForm(v string) error {
	if v == "" || config.IsPostgres(v) {
		return nil
	}
	if i := strings.Index(v, "://"); i > 0 {
		return fmt.Errorf("%q: unsupported store; give a SQLite file path (loadout.db) or a postgres://USER@HOST/DB URL", redact(v))
	}
	return nil
}

// storeExists reports whether the store dsn names is there: a PostgreSQL
// URL always counts (the server says), a SQLite file must exist.
func storeExists(dsn string) bool {
	if config.IsPostgres(dsn) {
		return true
	}
	_, err := os.Stat(dsn)
	return err == nil
}

// errNoStore is what a command that only reads says about a SQLite file
// that does not exist: it never creates one.
func errNoStore(dsn string) error {
	return fmt.Errorf("store %s does not exist; this command only reads and creates nothing: check --db, $LOADOUT_DB or the config's \"store\" (a store is created by 'loadout import', 'loadout serve' or 'loadout token create')", dsn)
}

// openMode says whether opening a store may create it.
type openMode bool

const (
	readOnly  openMode = false // existing stores only
	mayCreate openMode = true  // a SQLite file (and its folder) is created if missing
)

// openStore opens SQLite for a path and PostgreSQL for a postgres:// URL,
// with the config's storeLimits as the limits of every write (f may be nil:
// the defaults). With readOnly, a missing SQLite file is an error and
// nothing is created.
func openStore(ctx context.Context, dsn string, f *config.File, mode openMode) (store.Store, error) {
	var st *sqlstore.Store
	var err error
	if config.IsPostgres(dsn) {
		var o postgres.Options
		if f != nil {
			o = postgres.Options{MaxConns: f.StorePool.MaxConns, MaxIdleTime: time.Duration(f.StorePool.MaxIdleTime)}
		}
		st, err = postgres.OpenWith(ctx, dsn, o)
	} else {
		if mode == readOnly {
			if fi, err := os.Stat(dsn); err != nil || fi.IsDir() {
				return nil, errNoStore(dsn)
			}
		} else if err := os.MkdirAll(filepath.Dir(dsn), 0o755); err != nil {
			return nil, err
		}
		var o sqlite.Options
		if f != nil {
			o = sqlite.Options{MaxConns: f.StorePool.MaxConns, MaxIdleTime: time.Duration(f.StorePool.MaxIdleTime)}
		}
		st, err = sqlite.OpenWith(dsn, o)
	}
	if err != nil {
		// One line: a driver's error can span several (pgx lists each
		// address it tried).
		return nil, fmt.Errorf("store %s: %s", redact(dsn), oneLine(err.Error()))
	}
	st.Limits = limitsOf(f)
	st.Gate = safety.Gate(policyOf(f))
	return st, nil
}

// using prints, on one line of stderr, the config and store a command
// works on (a store URL without its password).
func using(e *env, f *config.File, dsn string) {
	c := "none"
	if f != nil {
		c = f.Path
	}
	if dsn == "" {
		dsn = "none"
	}
	fmt.Fprintf(e.stderr, "loadout: config %s, store %s\n", c, redact(dsn))
}

// storeProvider serves the store's enabled skills to the catalog, one by
// one after a write (catalog.SkillProvider).
func storeProvider(s store.Store) catalog.Provider { return store.NewProvider(s) }

// pluginProviders loads the configured plugin folders. Each plugin serves
// its enabled skills: its default, unless the store holds an override.
func pluginProviders(ctx context.Context, dirs []string, s store.Store) (map[string]catalog.Provider, []string, []skill.Diagnostic) {
	plugins, diags := plugin.LoadAll(dirs)
	providers := map[string]catalog.Provider{}
	var order []string
	for _, p := range plugins {
		p := p
		order = append(order, p.Manifest.ID)
		providers[p.Manifest.ID] = catalog.ProviderFunc(func(ctx context.Context) ([]*skill.Skill, []skill.Diagnostic) {
			overrides := map[string]bool{}
			var d []skill.Diagnostic
			if s != nil {
				o, err := s.Overrides(ctx)
				if err != nil {
					d = append(d, skill.Diagnostic{Severity: skill.Warning, Code: skill.CodeReadError, Message: fmt.Sprintf("cannot read enable/disable overrides from the store: %v; plugin defaults apply", err)})
				}
				overrides = o
			}
			var out []*skill.Skill
			for _, ps := range p.Skills {
				on := ps.DefaultEnabled
				if v, ok := overrides[ps.Key]; ok {
					on = v
				}
				if on {
					out = append(out, ps.Skill)
				}
			}
			return out, d
		})
	}
	return providers, order, diags
}

// pluginStates lists every plugin skill with its enabled state, for the
// plugins command.
type pluginState struct {
	Key     string       `json:"key"`
	Name    string       `json:"name"`
	Enabled bool         `json:"enabled"`
	Default bool         `json:"defaultEnabled"`
	Origin  skill.Origin `json:"source"`
}

func pluginStates(ctx context.Context, dirs []string, s store.Store) ([]pluginState, []skill.Diagnostic) {
	plugins, diags := plugin.LoadAll(dirs)
	overrides := map[string]bool{}
	if s != nil {
		if o, err := s.Overrides(ctx); err == nil {
			overrides = o
		}
	}
	var out []pluginState
	for _, p := range plugins {
		for _, ps := range p.Skills {
			on := ps.DefaultEnabled
			if v, ok := overrides[ps.Key]; ok {
				on = v
			}
			out = append(out, pluginState{Key: ps.Key, Name: ps.Name, Enabled: on, Default: ps.DefaultEnabled, Origin: ps.OriginValue()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, diags
}
