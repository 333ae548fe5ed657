package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/loadout/loadout/store"
)

func init() {
	commands["plugins"] = command{"list the configured plugins' skills, with trust and enabled state", runPlugins}
}

func runPlugins(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var asJSON bool
	fs := newFlags(e, "plugins", "[--config F] [--db D] [--json]",
		"Lists every skill the configured plugins contribute: its key (for enable/disable), the\nplugin, its trust level and whether it is enabled. Manifest problems go to stderr.")
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 0); err != nil {
		return fail(e, err)
	}
	f, dsn, explicit, err := sf.resolve(e)
	if err != nil {
		return fail(e, err)
	}
	if f == nil || len(f.Plugins) == 0 {
		return fail(e, fmt.Errorf("no plugins configured: list plugin folders under \"plugins\" in loadout.json"))
	}
	// Only reads: a store never created holds no overrides.
	var st store.Store
	if explicit || storeExists(dsn) {
		s, err := openStore(ctx, dsn, f, readOnly)
		if err != nil {
			return fail(e, err)
		}
		defer s.Close()
		st = s
		using(e, f, dsn)
	} else {
		using(e, f, dsn+" (not created yet: no overrides)")
	}
	states, diags := pluginStates(ctx, f.Plugins, st)
	if asJSON {
		if states == nil {
			states = []pluginState{}
		}
		writeJSON(e.stdout, map[string]any{"skills": states, "diagnostics": diagsOrEmpty(diags)})
		return 0
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tPLUGIN\tTRUST\tENABLED")
	for _, s := range states {
		en := "yes"
		if !s.Enabled {
			en = "no"
		}
		if s.Enabled != s.Default {
			en += " (overridden)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Key, s.Origin.Plugin, s.Origin.Trust, en)
	}
	tw.Flush()
	printDiags(e.stderr, diags)
	return 0
}
