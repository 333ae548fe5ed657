package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/examples"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/mcpserver"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/watch"
	"github.com/loadout/loadout/wellknown"
)

func init() {
	commands["serve"] = command{"serve every agent its skills over HTTP and MCP (the main job)", runServe}
	commands["mcp"] = command{"serve one agent's skills over MCP on stdin/stdout", runMCP}
}

// serverFlags configure serve and mcp.
type serverFlags struct {
	catalogFlags
	addr      string
	stateless bool
	noWatch   bool
	logJSON   bool
	logLevel  string
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "config `file` (default: $LOADOUT_CONFIG, ./loadout.json, ./examples/loadout.json, else the examples built into loadout)")
	fs.StringVar(&f.db, "db", "", "store: a SQLite `file` or a postgres:// URL (default: $LOADOUT_DB, the config's \"store\", else loadout.db beside the config)")
	fs.Var(&f.roots, "root", "skills `folder` to serve as an agent named \"roots\" (repeatable; with no --config, only these)")
	fs.BoolVar(&f.noWatch, "no-watch", false, "do not watch skill folders for changes")
	fs.BoolVar(&f.logJSON, "log-json", false, "log JSON lines instead of text")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug (every request), info, warn or error")
}

// server is a running service and what it holds open.
type server struct {
	svc     *service.Service
	store   store.Store
	cfg     *config.File
	logger  *slog.Logger
	closers []func()
}

func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// defaultConfig finds a config when none is named: ./loadout.json, then the
// repo's examples/loadout.json, then the examples built into the binary,
// written to the user's cache folder.
func defaultConfig(e *env) (string, error) {
	for _, p := range []string{config.DefaultName, filepath.Join("examples", config.DefaultName)} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return examples.Materialize(filepath.Join(dir, "loadout", "examples"))
}

// startServer builds the catalog, store, plugins and service the flags
// describe, with live reload.
func startServer(ctx context.Context, e *env, f *serverFlags, transport string) (*server, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", f.logLevel)
	}
	var handler slog.Handler = slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})
	if f.logJSON {
		handler = slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: level})
	}
	logger := slog.New(handler)
	if f.config == "" && e.getenv("LOADOUT_CONFIG") == "" && len(f.roots) == 0 {
		p, err := defaultConfig(e)
		if err != nil {
			return nil, err
		}
		f.config = p
	}
	cfg, err := f.loadConfig(e)
	if err != nil {
		return nil, err
	}
	srv := &server{cfg: cfg, logger: logger}
	specs, opts := f.agentSpecs(cfg)
	opts.Scan.KeepBodies = true
	if e.getenv("GOMEMLIMIT") == "" {
		// Keep discovery's garbage from inflating the process; tuneMemory
		// sets the lasting limit once the catalog is loaded.
		debug.SetMemoryLimit(96 << 20)
	}
	dsn, _ := storeDSN(e, f.db, cfg)
	st, err := openStore(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", dsn, err)
	}
	srv.store = st
	srv.closers = append(srv.closers, func() { st.Close() })
	opts.Store = storeProvider(st)
	var pluginDiags []skill.Diagnostic
	if cfg != nil && len(cfg.Plugins) > 0 {
		opts.Plugins, opts.PluginOrder, pluginDiags = pluginProviders(ctx, cfg.Plugins, st)
	}
	start := time.Now()
	cat, err := catalog.New(ctx, specs, opts)
	if err != nil {
		srv.close()
		return nil, err
	}
	cat.AddDiagnostics(pluginDiags)
	tuneMemory(logger, e)
	server, _ := st.(store.Server)
	svcOpt := service.Options{Store: st, Server: server, Logger: logger}
	if cfg != nil {
		svcOpt.Limits = limitsOf(cfg)
		svcOpt.Receipts = retentionOf(cfg)
	}
	srv.svc = service.New(cat, svcOpt)
	srv.closers = append(srv.closers, func() { srv.svc.Close() })
	errs := 0
	for _, d := range cat.Diagnostics() {
		if d.Severity == skill.Error {
			errs++
		}
	}
	logger.Info("catalog loaded", "config", pathOr(cfg), "store", redact(dsn), "skills", len(cat.Global().Names()),
		"agents", len(cat.AgentIDs()), "diagnostics", len(cat.Diagnostics()), "errors", errs, "took", time.Since(start).Round(time.Millisecond))

	wctx, cancel := context.WithCancel(ctx)
	srv.closers = append(srv.closers, cancel)
	if !f.noWatch {
		w, err := watch.New(cat.Roots(), 100*time.Millisecond, logger)
		if err != nil {
			logger.Warn("live reload of folders is off", "err", err)
		} else {
			srv.closers = append(srv.closers, func() { w.Close() })
			logger.Info("watching skill folders", "folders", w.Watched())
			go func() {
				for batch := range w.Events() {
					srv.svc.Refresh(wctx, batch, "files changed")
				}
			}()
		}
	}
	if server != nil {
		ch, err := server.Changes(wctx)
		if err != nil {
			logger.Warn("changes by other instances will not be seen until restart", "err", err)
		} else {
			go func() {
				for range ch {
					srv.svc.Refresh(wctx, nil, "store changed")
				}
			}()
		}
	}
	return srv, nil
}

func pathOr(cfg *config.File) string {
	if cfg == nil {
		return "(none)"
	}
	return cfg.Path
}

// redact hides a password in a postgres URL for logs.
func redact(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		if at := strings.LastIndex(dsn, "@"); at > i {
			if c := strings.Index(dsn[i+3:at], ":"); c >= 0 {
				return dsn[:i+3+c] + ":***" + dsn[at:]
			}
		}
	}
	return dsn
}

func runServe(ctx context.Context, e *env, args []string) int {
	var f serverFlags
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [--config F | --root DIR...] [--db D] [--stateless] [--no-watch]",
		"Serves every agent its loadout: the HTTP API under /v1, MCP at /mcp (every skill) and\n/agents/ID/mcp (one agent), and the well-known skills indexes. With no flags it uses\n./loadout.json (else the examples), SQLite beside it, and 127.0.0.1:7777. It refuses a\nnon-loopback address unless tokens exist ('loadout token create'); once any token exists,\nevery request needs one. Stops cleanly on SIGINT/SIGTERM.")
	f.register(fs)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:7777", "address to listen on")
	fs.BoolVar(&f.stateless, "stateless", false, "stateless MCP sessions, for several instances behind a load balancer")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	srv, err := startServer(ctx, e, &f, "")
	if err != nil {
		return fail(e, err)
	}
	defer srv.close()
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return fail(e, fmt.Errorf("--addr %q: give HOST:PORT, like 127.0.0.1:7777", f.addr))
	}
	tokens := false
	if srvr, ok := srv.store.(store.Server); ok {
		ts, err := srvr.Tokens(ctx)
		tokens = err == nil && len(ts) > 0
	}
	if !loopback(host) && !tokens {
		return fail(e, fmt.Errorf("refusing to listen on %s without tokens: anyone on the network could read every skill. Create one with 'loadout token create --scope admin', or listen on 127.0.0.1", f.addr))
	}
	srv.svc = withTokens(srv, tokens)

	if addr := e.getenv("LOADOUT_PPROF"); addr != "" {
		startPprof(srv.logger, addr)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fail(e, err)
	}
	handler := serverHandler(srv.svc, srv.logger, f.stateless)
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	base := "http://" + ln.Addr().String()
	printURLs(e, srv.svc, base, tokens)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(e, err)
		}
	case <-ctx.Done():
		srv.logger.Info("shutting down: finishing requests in flight")
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			srv.logger.Error("shutdown", "err", err)
		}
	}
	srv.logger.Info("stopped")
	return 0
}

// withTokens rebuilds the service so that it requires tokens when any
// exist (the catalog and store are shared).
func withTokens(srv *server, tokens bool) *service.Service {
	if !tokens {
		return srv.svc
	}
	srv.svc.RequireTokens(true)
	return srv.svc
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serverHandler composes the API, MCP and well-known handlers behind
// request ids, logging and authentication.
func serverHandler(svc *service.Service, logger *slog.Logger, stateless bool) http.Handler {
	mux := http.NewServeMux()
	api := httpapi.New(svc, httpapi.Options{Logger: logger})
	mux.Handle("/", api)
	mux.Handle("/mcp", mcpserver.HTTPHandler(svc, mcpserver.Options{Agent: catalog.GlobalID, Stateless: stateless, Logger: logger}))
	mux.Handle("/.well-known/", wellknown.Handler(svc, catalog.GlobalID))
	var mu sync.Mutex
	mcps := map[string]http.Handler{}
	indexes := map[string]http.Handler{}
	mux.HandleFunc("/agents/{id}/mcp", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		mu.Lock()
		h, ok := mcps[id]
		if !ok {
			h = mcpserver.HTTPHandler(svc, mcpserver.Options{Agent: id, Stateless: stateless, Logger: logger})
			mcps[id] = h
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/agents/{id}/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		mu.Lock()
		h, ok := indexes[id]
		if !ok {
			h = http.StripPrefix("/agents/"+id, wellknown.Handler(svc, id))
			indexes[id] = h
		}
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	return httpapi.RequestID(httpapi.Log(logger, httpapi.Auth(svc, mux)))
}

func printURLs(e *env, svc *service.Service, base string, tokens bool) {
	fmt.Fprintf(e.stderr, "loadout is serving %d skills to %d agents\n", len(svc.Catalog().Global().Names()), len(svc.Catalog().AgentIDs()))
	fmt.Fprintf(e.stderr, "  API:          %s/v1/skills  (OpenAPI: %s/v1/openapi.json)\n", base, base)
	fmt.Fprintf(e.stderr, "  MCP:          %s/mcp  (every skill)\n", base)
	ids := svc.Catalog().AgentIDs()
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(e.stderr, "  %-14s%s/agents/%s/mcp\n", "MCP "+id+":", base, id)
	}
	fmt.Fprintf(e.stderr, "  index:        %s/.well-known/agent-skills/index.json\n", base)
	if tokens {
		fmt.Fprintln(e.stderr, "  tokens are required: send Authorization: Bearer TOKEN")
	} else {
		fmt.Fprintln(e.stderr, "  no tokens exist, so loopback requests need none ('loadout token create' to require them)")
	}
}

func runMCP(ctx context.Context, e *env, args []string) int {
	var f serverFlags
	fs := newFlags(e, "mcp", "[--config F] [--db D] --agent ID",
		"Serves one agent's skills over MCP on stdin and stdout, for hosts that start MCP servers\nas commands. Logs go to stderr.")
	f.register(fs)
	fs.StringVar(&f.agent, "agent", "", "agent `id` (default: every skill)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	srv, err := startServer(ctx, e, &f, service.TransportMCPStdio)
	if err != nil {
		return fail(e, err)
	}
	defer srv.close()
	id := f.agent
	if id == "" {
		id = catalog.GlobalID
	}
	if _, ok := srv.svc.Catalog().Agent(id); !ok {
		return fail(e, fmt.Errorf("no agent %q: agents are %s", id, strings.Join(srv.svc.Catalog().AgentIDs(), ", ")))
	}
	if err := mcpserver.ServeStdio(ctx, srv.svc, mcpserver.Options{Agent: id, Logger: srv.logger}); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(e.stderr, "loadout: mcp: %v\n", err)
		return 1
	}
	return 0
}

// startPprof serves Go's profiler on a separate address, loopback only, for
// measuring the server (LOADOUT_PPROF=127.0.0.1:6060).
func startPprof(logger *slog.Logger, addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !loopback(host) {
		logger.Warn("LOADOUT_PPROF must be a loopback HOST:PORT; profiler not started", "addr", addr)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		logger.Info("profiler listening", "addr", addr)
		if err := http.ListenAndServe(addr, mux); err != nil {
			logger.Warn("profiler stopped", "err", err)
		}
	}()
}

// tuneMemory runs after the first load. Discovery leaves garbage several
// times the size of what it keeps; it is handed back to the system at once,
// and a soft memory limit (unless GOMEMLIMIT is set) keeps the heap near
// what the catalog needs: twice the live heap, at least 80 MiB. Go's
// collector gives up at most half the CPU to meet it, so it never stalls
// the server.
func tuneMemory(logger *slog.Logger, e *env) {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if e.getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := max(int64(ms.HeapAlloc)*2, 80<<20)
	debug.SetMemoryLimit(limit)
	logger.Info("memory", "live_heap_mb", ms.HeapAlloc>>20, "soft_limit_mb", limit>>20)
}
