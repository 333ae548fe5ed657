package main

import (
	"fmt"
	"log/slog"
	"os"
	"sort"

	"github.com/loadout/loadout/service"
)

// newLogger is the logger of serve and mcp: text, or JSON lines with
// --log-json, on the command's stderr. When that is the process's stderr
// (the real command, not an in-process test) it also becomes slog's
// default, which the log package writes through too, so that packages
// logging to slog.Default() (the well-known handler) and net/http's own
// messages follow --log-json. With --log-json, the command's error line
// (fail) is a JSON log line as well.
func newLogger(e *env, level slog.Level, asJSON bool) *slog.Logger {
	opt := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(e.stderr, opt)
	if asJSON {
		h = slog.NewJSONHandler(e.stderr, opt)
		e.logJSON = true
	}
	logger := slog.New(h)
	if e.stderr == os.Stderr {
		slog.SetDefault(logger)
	}
	return logger
}

// banner prints where serve answers: as text for a person, or with
// --log-json as one JSON log line ("serving") with the same URLs, so that
// every line on stderr parses as JSON.
func banner(e *env, asJSON bool, logger *slog.Logger, svc *service.Service, base string, others []string, tokens bool, dsn string) {
	if !asJSON {
		printURLs(e, svc, base, others, tokens, dsn)
		return
	}
	ids := svc.Catalog().AgentIDs()
	sort.Strings(ids)
	agents := make(map[string]string, len(ids))
	for _, id := range ids {
		agents[id] = base + "/agents/" + id + "/mcp"
	}
	attrs := []any{"skills", len(svc.Catalog().Global().Names()), "agents", len(ids),
		"api", base + "/v1/skills", "openapi", base + "/v1/openapi.json", "mcp", base + "/mcp", "agent_mcp", agents,
		"index", base + "/.well-known/agent-skills/index.json", "endpoints", base + "/", "tokens_required", tokens}
	if len(others) > 0 {
		attrs = append(attrs, "other_addresses", others)
	}
	logger.Info("serving", attrs...)
}

// failJSON is fail's line with --log-json: an ERROR log line.
func failJSON(e *env, err error) {
	slog.New(slog.NewJSONHandler(e.stderr, nil)).Error(fmt.Sprint(err))
}
