package postgres

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/loadout/loadout/store/sqlstore"
)

// Tuning of the change feed's connection.
var (
	// healthEvery is how long the listener waits for a notification
	// before it checks that its connection still works.
	healthEvery = 30 * time.Second
	// minBackoff and maxBackoff bound the wait between reconnection
	// attempts; it doubles after each failure.
	minBackoff = 50 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// ListenerApplicationName is the application_name of the change feed's
// connection, unless the URL sets one.
const ListenerApplicationName = "loadout listen"

// listener is the store's change feed on PostgreSQL: a connection of its
// own (pgx's, not database/sql's) that LISTENs on sqlstore.NotifyChannel
// and reports the notifications about its schema that other instances
// sent, with their kind. It reconnects, with backoff, when the connection
// drops.
func listener(url string) sqlstore.Listener {
	return func(ctx context.Context, instance string, notify func(kind string)) (<-chan struct{}, error) {
		conn, schema, err := listen(ctx, url)
		if err != nil {
			return nil, err
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			backoff := minBackoff
			for {
				if conn == nil {
					select {
					case <-ctx.Done():
						return
					case <-time.After(backoff):
					}
					if conn, schema, err = listen(ctx, url); err != nil {
						conn = nil
						backoff = min(2*backoff, maxBackoff)
						continue
					}
					backoff = minBackoff
					// Anything may have changed while it was away.
					notify(sqlstore.ChangeSkills)
					notify(sqlstore.ChangeTokens)
					notify(sqlstore.ChangeBlocks)
				}
				n, err := wait(ctx, conn)
				switch {
				case ctx.Err() != nil:
					closeConn(conn)
					return
				case err != nil:
					closeConn(conn)
					conn = nil
				case n == nil:
					// Quiet for healthEvery, and the connection works.
				case n.Channel == sqlstore.NotifyChannel:
					if k, ok := parsePayload(n.Payload, schema, instance); ok {
						notify(k)
					}
				}
			}
		}()
		return done, nil
	}
}

// parsePayload reads a notification's payload, "SCHEMA INSTANCE[ KIND]"
// (no kind: skills), and says whether it is another instance's change to
// schema.
func parsePayload(payload, schema, instance string) (kind string, ok bool) {
	sch, rest, _ := strings.Cut(payload, " ")
	from, kind, _ := strings.Cut(rest, " ")
	if kind == "" {
		kind = sqlstore.ChangeSkills
	}
	return kind, sch == schema && from != instance
}

// listen connects, learns the schema the store's tables live in (the
// first of the URL's search_path, as for the store's own connections) and
// LISTENs.
func listen(ctx context.Context, url string) (*pgx.Conn, string, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, "", err
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = ListenerApplicationName
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	var schema string
	if err := conn.QueryRow(ctx, `SELECT coalesce(current_schema(), '')`).Scan(&schema); err != nil {
		closeConn(conn)
		return nil, "", err
	}
	if _, err := conn.Exec(ctx, `LISTEN `+sqlstore.NotifyChannel); err != nil {
		closeConn(conn)
		return nil, "", err
	}
	return conn, schema, nil
}

// wait returns the next notification; or nil, nil after healthEvery
// without one, once a ping has shown the connection still works.
func wait(ctx context.Context, conn *pgx.Conn) (*pgconn.Notification, error) {
	wctx, cancel := context.WithTimeout(ctx, healthEvery)
	n, err := conn.WaitForNotification(wctx)
	cancel()
	if err == nil {
		return n, nil
	}
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed() {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return nil, conn.Ping(pctx)
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Close(ctx)
}
