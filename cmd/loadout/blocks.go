package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
)

// The kill switch from the command line: block, unblock and blocks write
// and read the store's blocks directly; every server sharing the store
// applies a change within its block feed's delay (PostgreSQL: NOTIFY;
// SQLite: a 200 ms poll).

func init() {
	commands["block"] = command{"block a skill, one version of it, or every skill of a source, on every server", runBlock}
	commands["unblock"] = command{"remove a block by its id, or every block of a skill", runUnblock}
	commands["blocks"] = command{"list the blocks in force", runBlocks}
}

// blockerOf is the store's kill switch, or an error saying it has none.
func blockerOf(st store.Store) (store.Blocker, error) {
	b, ok := st.(store.Blocker)
	if !ok {
		return nil, fmt.Errorf("this store (%T) keeps no blocks: use a SQLite or PostgreSQL store", st)
	}
	return b, nil
}

// auditCLI appends an audit record when the store keeps an audit trail.
func auditCLI(ctx context.Context, e *env, st store.Store, action string, b store.Block) {
	_, done := cliAudited(ctx, st, store.AuditRecord{Action: action, Target: b.Target(), Detail: b.Reason})
	done(nil)
}

func runBlock(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var b store.Block
	fs := newFlags(e, "block", "SKILL [--version N | --digest D] --reason R | --source ID --reason R [--db D]",
		"Blocks a skill (every version, from every source), one version of it (--version: a stored version number;\n--digest: its digest, as receipts and exports show it) or every skill of a source (--source: its id as\n'loadout sources' or GET /v1/sources names it). No server sharing the store lists, loads or reads it,\nwithin a second, until 'loadout unblock'. A skill that does not exist yet is blocked when it appears.")
	sf.register(fs)
	fs.IntVar(&b.Version, "version", 0, "block only stored version `N`")
	fs.StringVar(&b.Digest, "digest", "", "block only the version with digest `D` (sha256:...)")
	fs.StringVar(&b.Source, "source", "", "block every skill of source `ID`")
	fs.StringVar(&b.Reason, "reason", "", "why (required, one line): shown to whoever is refused")
	nargs := 1
	if slices.ContainsFunc(args, func(a string) bool {
		return a == "--source" || a == "-source" || strings.HasPrefix(a, "--source=") || strings.HasPrefix(a, "-source=")
	}) {
		nargs = 0
	}
	return sf.run(ctx, e, fs, args, nargs, mayCreate, func(st store.Store) int {
		bl, err := blockerOf(st)
		if err != nil {
			return fail(e, err)
		}
		if nargs == 1 {
			b.Skill = fs.Arg(0)
		}
		b.Actor = cliActor()
		got, err := bl.AddBlock(ctx, b)
		if err != nil {
			return fail(e, err)
		}
		auditCLI(ctx, e, st, "block", got)
		fmt.Fprintf(e.stdout, "blocked %s (block %s): %s\n", termText(got.Target()), got.ID, termText(got.Reason))
		fmt.Fprintf(e.stderr, "every server sharing this store refuses it within a second; 'loadout unblock %s' lifts it.\n", got.ID)
		return 0
	})
}

func runUnblock(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	fs := newFlags(e, "unblock", "ID|SKILL [--db D]", "Removes a block by its id ('loadout blocks' lists them), or every block of a skill by its name:\nwhat was blocked is served again, as it was.")
	sf.register(fs)
	return sf.run(ctx, e, fs, args, 1, readOnly, func(st store.Store) int {
		bl, err := blockerOf(st)
		if err != nil {
			return fail(e, err)
		}
		arg := fs.Arg(0)
		all, err := bl.Blocks(ctx)
		if err != nil {
			return fail(e, err)
		}
		var ids []string
		for _, b := range all {
			if b.ID == arg {
				ids = []string{b.ID}
				break
			}
			if b.Skill == arg {
				ids = append(ids, b.ID)
			}
		}
		if len(ids) == 0 {
			return fail(e, fmt.Errorf("unblock: no block has the id %q, and no block names a skill %q: 'loadout blocks' lists them", arg, arg))
		}
		for _, id := range ids {
			got, err := bl.RemoveBlock(ctx, id)
			if err != nil {
				return fail(e, err)
			}
			auditCLI(ctx, e, st, "unblock", got)
			fmt.Fprintf(e.stdout, "unblocked %s (block %s)\n", termText(got.Target()), got.ID)
		}
		return 0
	})
}

func runBlocks(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var asJSON bool
	fs := newFlags(e, "blocks", "[--json] [--db D]", "Lists the blocks in force, oldest first.")
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	return sf.run(ctx, e, fs, args, 0, readOnly, func(st store.Store) int {
		bl, err := blockerOf(st)
		if err != nil {
			return fail(e, err)
		}
		bs, err := bl.Blocks(ctx)
		if err != nil {
			return fail(e, err)
		}
		if asJSON {
			if bs == nil {
				bs = []store.Block{}
			}
			writeJSON(e.stdout, map[string]any{"blocks": bs})
			return 0
		}
		if len(bs) == 0 {
			fmt.Fprintln(e.stderr, "nothing is blocked")
			return 0
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tBLOCKED\tREASON\tBY\tSINCE")
		for _, b := range bs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", b.ID, termText(b.Target()), termText(b.Reason), orDash(termText(b.Actor)), b.CreatedAt.UTC().Format(time.RFC3339))
		}
		tw.Flush()
		return 0
	})
}

// applyBlocks applies the store's blocks to a command's catalog (load,
// read, prompt, list, export...), as a server does: a blocked skill is not
// listed, and its load or read is refused naming the reason.
func applyBlocks(ctx context.Context, st store.Store, cat *catalog.Catalog) error {
	bl, ok := st.(store.Blocker)
	if !ok {
		return nil
	}
	bs, err := bl.Blocks(ctx)
	if err != nil {
		return fmt.Errorf("reading the blocks: %w", err)
	}
	cb := make([]catalog.Block, len(bs))
	for i, b := range bs {
		cb[i] = catalog.Block{ID: b.ID, Skill: b.Skill, Version: b.Version, Digest: b.Digest, Source: b.Source, Reason: b.Reason}
	}
	cat.SetBlocks(ctx, cb)
	return nil
}

// storedBlock refuses the export of a stored skill's version that a block
// names (by name, version, digest, or the store as a source).
func storedBlock(ctx context.Context, st store.Store, name string, rec *store.Record) error {
	bl, ok := st.(store.Blocker)
	if !ok {
		return nil
	}
	bs, err := bl.Blocks(ctx)
	if err != nil {
		return fmt.Errorf("reading the blocks: %w", err)
	}
	for _, b := range bs {
		if b.Source == "store" || b.Skill == name && (b.Version == 0 && b.Digest == "" || b.Version == rec.Version || b.Digest == rec.Digest) {
			return service.BlockedError(name, catalog.Block{ID: b.ID, Skill: b.Skill, Version: b.Version, Digest: b.Digest, Source: b.Source, Reason: b.Reason})
		}
	}
	return nil
}
