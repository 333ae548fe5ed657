package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/sqlite"
	"github.com/loadout/loadout/store/sqlstore"
)

// lockedBuffer is a log destination safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A store failure (here a SQLite file that may not grow, which fails as a
// full disk does: SQLITE_FULL) is logged with its cause, while the client
// gets a generic message with the request id.
func TestInternalErrorLogsCause(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := st.DB().QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", sqlite.DSN(path)+fmt.Sprintf("&_pragma=max_page_count(%d)", pages))
	if err != nil {
		t.Fatal(err)
	}
	full, err := sqlstore.Open(context.Background(), db, sqlstore.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()

	cat, err := catalog.New(context.Background(), nil, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	svc := service.New(cat, service.Options{Store: full, Server: full, Logger: logger})
	defer svc.Close()
	srv := httptest.NewServer(httpapi.RequestID(httpapi.Log(logger, httpapi.Auth(svc, httpapi.New(svc, httpapi.Options{Logger: logger})))))
	defer srv.Close()

	body := doc(t, "big", "Big.", strings.Repeat("A line that needs pages of the database file.\n", 2000))
	req, _ := http.NewRequest("PUT", srv.URL+"/v1/skills/big", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.ReadFrom(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 {
		t.Fatalf("status %d: %s", res.StatusCode, out.String())
	}
	if strings.Contains(out.String(), "full") || strings.Contains(out.String(), "sqlite") || !strings.Contains(out.String(), "internal error (request id ") {
		t.Errorf("the client is told: %s", out.String())
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "request failed") {
			line = l
		}
	}
	if !strings.Contains(line, "database or disk is full") {
		t.Errorf("the log line does not say why:\n%s", logs.String())
	}
}
