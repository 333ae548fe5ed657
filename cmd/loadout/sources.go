package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/plugin"
	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/store/sqlstore"
)

// storeDSN picks the store: --db, then $LOADOUT_DB, then the config's
// "store", then loadout.db beside the config (or in the working folder).
// explicit says whether anything named it.
func storeDSN(e *env, flagDB string, f *config.File) (dsn string, explicit bool) {
	cwd, _ := os.Getwd()
	switch {
	case flagDB != "":
		return config.ResolveStore(cwd, flagDB), true
	case e.getenv("LOADOUT_DB") != "":
		return config.ResolveStore(cwd, e.getenv("LOADOUT_DB")), true
	case f != nil:
		return f.StoreDSN(), f.Store != ""
	}
	return config.ResolveStore(cwd, ""), false
}

// openStore opens SQLite for a path and PostgreSQL for a postgres:// URL,
// with the config's storeLimits as the limits of every write (f may be nil:
// the defaults).
func openStore(ctx context.Context, dsn string, f *config.File) (store.Store, error) {
	var st *sqlstore.Store
	var err error
	if config.IsPostgres(dsn) {
		st, err = postgres.Open(ctx, dsn)
	} else {
		if err := os.MkdirAll(filepath.Dir(dsn), 0o755); err != nil {
			return nil, err
		}
		st, err = sqlite.Open(dsn)
	}
	if err != nil {
		return nil, err
	}
	st.Limits = limitsOf(f)
	return st, nil
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
			out = append(out, pluginState{Key: ps.Key, Name: ps.Name, Enabled: on, Default: ps.DefaultEnabled, Origin: ps.Origin})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, diags
}
