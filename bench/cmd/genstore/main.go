// Command genstore fills a PostgreSQL skill store with generated skills,
// through the store's own write path (sqlstore's Import: every skill
// checked, versioned and content-addressed, exactly as `loadout import`
// writes it), in batches on a few connections at once:
//
//	go run ./bench/cmd/genstore -dsn postgres://… -schema s200k -n 200000
//
// The skills are bench/gen's (the same bytes gentree writes for the same n
// and seed: ~3 KB SKILL.md plus three supporting files each). The schema is
// created when missing and the store's tables go in it, so one server
// holds one store per size; the DSN to give `loadout serve` is printed on
// the last line (dsn=…). It is resumable: skills already stored under
// their generated name are left alone, so a second run with the same -n
// writes nothing and a larger -n adds only the new ones (skill i is the
// same for every n).
//
// It prints one line: skills written, seconds, skills/s and the size of
// the schema's tables on the server.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/loadout/loadout/bench/gen"
	"github.com/loadout/loadout/postgres"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

func main() {
	dsn := flag.String("dsn", os.Getenv("LOADOUT_TEST_POSTGRES"), "PostgreSQL URL (default $LOADOUT_TEST_POSTGRES)")
	schema := flag.String("schema", "", "schema to create and fill (empty: the URL's own search_path)")
	n := flag.Int("n", 1000, "skills the store should hold")
	seed := flag.Int64("seed", 1, "generator seed")
	batch := flag.Int("batch", 200, "skills per Import transaction")
	workers := flag.Int("workers", 2, "Import transactions at once")
	flag.Parse()
	if err := run(*dsn, *schema, *n, *seed, *batch, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "genstore:", err)
		os.Exit(1)
	}
}

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func run(dsn, schema string, n int, seed int64, batch, workers int) error {
	if dsn == "" {
		return fmt.Errorf("no database: give -dsn postgres://… or set LOADOUT_TEST_POSTGRES")
	}
	if n < 0 || batch < 1 || workers < 1 {
		return fmt.Errorf("-n must be at least 0, -batch and -workers at least 1 (got %d, %d, %d)", n, batch, workers)
	}
	ctx := context.Background()
	if schema != "" {
		if !schemaName.MatchString(schema) {
			return fmt.Errorf("-schema %q: use lower-case letters, digits and _ (a PostgreSQL identifier that needs no quoting)", schema)
		}
		var err error
		if dsn, err = withSchema(ctx, dsn, schema); err != nil {
			return err
		}
	}
	st, err := postgres.OpenWith(ctx, dsn, postgres.Options{MaxConns: workers + 1})
	if err != nil {
		return err
	}
	defer st.Close()
	have, err := names(ctx, st.DB())
	if err != nil {
		return err
	}

	start := time.Now()
	jobs := make(chan []store.ImportItem, workers)
	var (
		mu       sync.Mutex
		firstErr error
		written  int
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	for range workers {
		wg.Go(func() {
			for items := range jobs {
				res, err := st.Import(ctx, items)
				if err != nil {
					fail(err)
					continue
				}
				for _, r := range res {
					if r.Error != nil {
						fail(fmt.Errorf("skill %s: %s: %v", r.Name, r.Action, r.Error))
					}
				}
				mu.Lock()
				written += len(items)
				mu.Unlock()
			}
		})
	}
	var items []store.ImportItem
	genErr := gen.Skills(n, seed, func(i int, s gen.Skill) error {
		if have[s.Name] {
			return nil
		}
		mu.Lock()
		bad := firstErr
		mu.Unlock()
		if bad != nil {
			return bad
		}
		b := &skill.Bundle{Content: s.Files[0].Data}
		for _, f := range s.Files[1:] {
			b.Files = append(b.Files, skill.BundleFile{Path: f.Path, Data: f.Data, Executable: f.Executable})
		}
		items = append(items, store.ImportItem{Bundle: b, Source: "import", Provenance: "genstore " + s.Folder})
		if len(items) == batch {
			jobs <- items
			items = nil
		}
		return nil
	})
	if len(items) > 0 && genErr == nil {
		jobs <- items
	}
	close(jobs)
	wg.Wait()
	if genErr != nil {
		return genErr
	}
	if firstErr != nil {
		return firstErr
	}
	secs := time.Since(start).Seconds()
	var total int
	var bytes int64
	if err := st.DB().QueryRowContext(ctx, `SELECT count(*) FROM skills`).Scan(&total); err != nil {
		return err
	}
	if err := st.DB().QueryRowContext(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
WHERE ns.nspname = current_schema() AND c.relkind = 'r'`).Scan(&bytes); err != nil {
		return err
	}
	rate := 0.0
	if secs > 0 {
		rate = float64(written) / secs
	}
	fmt.Printf("genstore skills=%d written=%d seconds=%.1f rate=%.0f/s table_mb=%d\n", total, written, secs, rate, bytes>>20)
	if total < n {
		return fmt.Errorf("the store holds %d skills, fewer than the %d asked for", total, n)
	}
	fmt.Printf("dsn=%s\n", dsn)
	return nil
}

// withSchema creates schema when missing and returns dsn with it as the
// search_path, where sqlstore puts its tables.
func withSchema(ctx context.Context, dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("-schema needs a postgres:// URL, not %q", redact(dsn))
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
		return "", fmt.Errorf("creating schema %s: %w", schema, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// names returns the names already stored.
func names(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM skills`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out[s] = true
	}
	return out, rows.Err()
}

func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return "(the DSN)"
}
