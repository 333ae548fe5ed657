package main

import (
	"os"
	"testing"

	"github.com/loadout/loadout/internal/pgtest"
)

// freshPostgres returns a URL to a new, empty schema on the test server
// (LOADOUT_TEST_POSTGRES; scripts/pg.sh starts one). Under CI a missing
// server fails the test rather than skipping it.
func freshPostgres(t *testing.T) string {
	t.Helper()
	base := os.Getenv("LOADOUT_TEST_POSTGRES")
	if base == "" {
		t.Fatal("LOADOUT_TEST_POSTGRES is not set, and CI must not skip PostgreSQL: start a server with scripts/pg.sh")
	}
	return pgtest.Schema(t, base, "cli_test_")
}
