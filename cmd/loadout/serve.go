package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/store/sqlstore"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/examples"
	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/identity"
	"github.com/loadout/loadout/mcpserver"
	"github.com/loadout/loadout/metrics"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/watch"
	"github.com/loadout/loadout/webui"
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
	bodies    string // --keep-bodies
	demo      bool
	net       netFlags
}

// netFlags are serve's bounds on clients; zero means the config's value,
// else the default.
type netFlags struct {
	allowedHosts, allowedOrigins listFlag
	maxConns, maxConnsPerIP      int
	readHeaderTimeout            time.Duration
	readTimeout, writeTimeout    time.Duration
	idleTimeout                  time.Duration
	mcpSessions, mcpPerToken     int
	mcpSessionIdle               time.Duration
}

// Defaults of serve's bounds on clients (README, Security).
const (
	// defaultMaxConns bounds every open connection; lowered to half the
	// process's file descriptor limit when that is smaller, so the store,
	// skill files and watches keep theirs.
	defaultMaxConns = 4096
	// defaultMaxConnsPerIP bounds one client address's connections, well
	// under defaultMaxConns, so one client cannot take every place.
	defaultMaxConnsPerIP = 512
	// defaultReadHeaderTimeout cuts a connection that does not send its
	// request's headers in time (a new idle connection included).
	defaultReadHeaderTimeout = 10 * time.Second
	// defaultReadTimeout bounds the arrival of a request body (a 16 MiB
	// import needs about 300 KB/s).
	defaultReadTimeout = 60 * time.Second
	// defaultWriteTimeout bounds one stalled write to a client that does
	// not read.
	defaultWriteTimeout = 60 * time.Second
	// defaultIdleTimeout closes a kept-alive connection with no request
	// for this long: longer than common clients' own idle timeouts (Go's
	// 90 s), so that the client, not the server, closes first and no
	// request is sent on a connection being closed.
	defaultIdleTimeout = 120 * time.Second
	// maxHeaderBytes bounds a request's headers (Go's default is 1 MiB,
	// which times defaultMaxConns would be 4 GiB of slow headers).
	maxHeaderBytes = 32 << 10
)

func (n *netFlags) register(fs *flag.FlagSet) {
	fs.Var(&n.allowedHosts, "allowed-host", "a further `host` (or host:port) clients may name in the Host header, such as a proxy's; repeatable (config: server.allowedHosts). Loopback names and the --addr host are always allowed")
	fs.Var(&n.allowedOrigins, "allowed-origin", "a browser `origin` (https://ui.example.com) whose pages may send POST, PUT and DELETE; repeatable (config: server.allowedOrigins)")
	fs.IntVar(&n.maxConns, "max-conns", 0, fmt.Sprintf("most open client connections (config: server.maxConns; default %d, or half the file descriptor limit if lower)", defaultMaxConns))
	fs.IntVar(&n.maxConnsPerIP, "max-conns-per-ip", 0, fmt.Sprintf("most open connections from one client address (config: server.maxConnsPerIP; default %d)", defaultMaxConnsPerIP))
	fs.DurationVar(&n.readHeaderTimeout, "read-header-timeout", 0, fmt.Sprintf("time for a request's headers to arrive (config: server.readHeaderTimeout; default %s)", defaultReadHeaderTimeout))
	fs.DurationVar(&n.readTimeout, "read-timeout", 0, fmt.Sprintf("time for a request's body to arrive (config: server.readTimeout; default %s)", defaultReadTimeout))
	fs.DurationVar(&n.writeTimeout, "write-timeout", 0, fmt.Sprintf("longest one write to a client may stall (config: server.writeTimeout; default %s)", defaultWriteTimeout))
	fs.DurationVar(&n.idleTimeout, "idle-timeout", 0, fmt.Sprintf("close a kept-alive connection idle this long (config: server.idleTimeout; default %s)", defaultIdleTimeout))
	fs.IntVar(&n.mcpSessions, "mcp-sessions", 0, fmt.Sprintf("most open MCP sessions; past it the one idle the longest is closed (config: server.mcpSessions; default %d)", mcpserver.DefaultMaxSessions))
	fs.IntVar(&n.mcpPerToken, "mcp-sessions-per-token", 0, fmt.Sprintf("most open MCP sessions of one token; past it that token's own session idle the longest is closed, and no token's sessions are closed for another's (config: server.mcpSessionsPerToken; default %d)", mcpserver.DefaultMaxSessionsPerToken))
	fs.DurationVar(&n.mcpSessionIdle, "mcp-session-idle", 0, fmt.Sprintf("close an MCP session without requests this long (config: server.mcpSessionIdle; default %s)", mcpserver.DefaultSessionIdle))
}

// netSettings are serve's bounds on clients, resolved.
type netSettings struct {
	allowedHosts, allowedOrigins []string
	maxConns, maxConnsPerIP      int
	readHeaderTimeout            time.Duration
	timeouts                     httpapi.TimeoutOptions
	idleTimeout                  time.Duration
	mcpSessions, mcpPerToken     int
	mcpSessionIdle               time.Duration
	// shutdownDelay and shutdownTimeout order the drain after SIGTERM
	// (serve_drain.go): config only (server.shutdownDelay, …Timeout).
	shutdownDelay, shutdownTimeout time.Duration
}

// resolve takes each bound from the flag, else the config, else the
// default.
func (n *netFlags) resolve(cfg *config.File) (netSettings, error) {
	var c config.Server
	if cfg != nil {
		c = cfg.Server
	}
	pickInt := func(flagName string, f, conf, def int) (int, error) {
		switch {
		case f < 0:
			return 0, fmt.Errorf("--%s %d: give a positive number (or leave it out for the default)", flagName, f)
		case f > 0:
			return f, nil
		case conf > 0:
			return conf, nil
		}
		return def, nil
	}
	pickDur := func(flagName string, f time.Duration, conf config.Duration, def time.Duration) (time.Duration, error) {
		switch {
		case f < 0:
			return 0, fmt.Errorf("--%s %s: give a positive duration (or leave it out for the default)", flagName, f)
		case f > 0:
			return f, nil
		case conf > 0:
			return time.Duration(conf), nil
		}
		return def, nil
	}
	var s netSettings
	var err error
	maxDefault := defaultMaxConns
	if fds := fdLimit(); fds > 0 && fds/2 < maxDefault {
		maxDefault = max(fds/2, 16)
	}
	for _, x := range []struct {
		dst          *int
		name         string
		f, conf, def int
	}{
		{&s.maxConns, "max-conns", n.maxConns, c.MaxConns, maxDefault},
		{&s.maxConnsPerIP, "max-conns-per-ip", n.maxConnsPerIP, c.MaxConnsPerIP, min(defaultMaxConnsPerIP, max(maxDefault/2, 1))},
		{&s.mcpSessions, "mcp-sessions", n.mcpSessions, c.MCPSessions, mcpserver.DefaultMaxSessions},
		{&s.mcpPerToken, "mcp-sessions-per-token", n.mcpPerToken, c.MCPSessionsPerToken, mcpserver.DefaultMaxSessionsPerToken},
	} {
		if *x.dst, err = pickInt(x.name, x.f, x.conf, x.def); err != nil {
			return s, err
		}
	}
	for _, x := range []struct {
		dst  *time.Duration
		name string
		f    time.Duration
		conf config.Duration
		def  time.Duration
	}{
		{&s.readHeaderTimeout, "read-header-timeout", n.readHeaderTimeout, c.ReadHeaderTimeout, defaultReadHeaderTimeout},
		{&s.timeouts.Read, "read-timeout", n.readTimeout, c.ReadTimeout, defaultReadTimeout},
		{&s.timeouts.Write, "write-timeout", n.writeTimeout, c.WriteTimeout, defaultWriteTimeout},
		{&s.idleTimeout, "idle-timeout", n.idleTimeout, c.IdleTimeout, defaultIdleTimeout},
		{&s.mcpSessionIdle, "mcp-session-idle", n.mcpSessionIdle, c.MCPSessionIdle, mcpserver.DefaultSessionIdle},
	} {
		if *x.dst, err = pickDur(x.name, x.f, x.conf, x.def); err != nil {
			return s, err
		}
	}
	for _, h := range n.allowedHosts {
		if err := config.CheckHost(h); err != nil {
			return s, fmt.Errorf("--allowed-host: %v", err)
		}
	}
	s.allowedHosts = append(append([]string(nil), c.AllowedHosts...), n.allowedHosts...)
	s.allowedOrigins = append(append([]string(nil), c.AllowedOrigins...), n.allowedOrigins...)
	s.shutdownDelay = time.Duration(c.ShutdownDelay)
	s.shutdownTimeout = time.Duration(c.ShutdownTimeout)
	if s.shutdownTimeout == 0 {
		s.shutdownTimeout = config.DefaultShutdownTimeout
	}
	return s, nil
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "config `file` (default: $LOADOUT_CONFIG, else ./loadout.json if present)")
	fs.BoolVar(&f.demo, "demo", false, "serve the example skills built into loadout (written to the user cache folder), to try it out; not with --config or --root")
	fs.StringVar(&f.db, "db", "", "store: a SQLite `file` or a postgres:// URL (default: $LOADOUT_DB, the config's \"store\", else loadout.db beside the config)")
	fs.Var(&f.roots, "root", "skills `folder` to serve as an agent named \"roots\" (repeatable; with no --config, only these)")
	fs.BoolVar(&f.noWatch, "no-watch", false, "do not watch skill folders or the config file for changes (SIGHUP and POST /v1/reload still reload)")
	fs.BoolVar(&f.logJSON, "log-json", false, "log JSON lines instead of text (the start-up banner and a fatal error too)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug (every request), info, warn or error")
	fs.StringVar(&f.bodies, "keep-bodies", bodiesFile, "where the skills' bodies are kept as scanned, so that a broken edit keeps serving the last good one: \"file\" (a temporary file in $TMPDIR, unlinked at once, read back through the page cache) or \"memory\" (about 3 KB of heap a skill)")
}

// Values of --keep-bodies.
const (
	bodiesFile   = "file"
	bodiesMemory = "memory"
)

// server is a running service and what it holds open.
type server struct {
	svc     *service.Service
	store   store.Store
	dsn     string // the store's, for the hints that name it
	cfg     *config.File
	logger  *slog.Logger
	mem     *memoryTuner
	start   *startup // startup.go
	closers []func()
}

func (s *server) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// demoConfig writes the examples built into the binary to the user's
// cache folder and returns their config (serve --demo, mcp --demo).
func demoConfig() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return examples.Materialize(filepath.Join(dir, "loadout", "examples"))
}

// errNothingToServe is what serve and mcp say when nothing names skills:
// they never fall back to the examples unasked.
var errNothingToServe = errors.New("nothing to serve: pass --config FILE, --root DIR or --demo (the built-in examples), or run where a loadout.json is")

// startServer builds the catalog, store, plugins and service the flags
// describe, with live reload.
func startServer(ctx context.Context, e *env, f *serverFlags, transport string) (*server, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", f.logLevel)
	}
	logger := newLogger(e, level, f.logJSON)
	if f.bodies != bodiesFile && f.bodies != bodiesMemory {
		return nil, fmt.Errorf("--keep-bodies %q: use %q or %q", f.bodies, bodiesFile, bodiesMemory)
	}
	if addr := e.getenv("LOADOUT_PPROF"); addr != "" {
		// Started before the catalog is loaded, so start-up can be
		// profiled too.
		startPprof(logger, addr)
	}
	if f.demo {
		if f.config != "" || len(f.roots) > 0 {
			return nil, errors.New("--demo serves only the built-in examples: leave out --config and --root")
		}
		p, err := demoConfig()
		if err != nil {
			return nil, fmt.Errorf("--demo: writing the examples: %w", err)
		}
		f.config = p
	}
	cfg, dsn, _, err := f.resolve(e)
	if err != nil {
		return nil, err
	}
	if cfg == nil && len(f.roots) == 0 {
		return nil, errNothingToServe
	}
	srv := &server{cfg: cfg, logger: logger, dsn: dsn, start: newStartup(logger)}
	specs, opts := f.agentSpecs(cfg)
	opts.Scan.KeepBodies = true
	srv.mem = startMemory(e.getenv) // memory.go; srv.mem.loaded once serving
	srv.closers = append(srv.closers, srv.mem.stop)
	st, err := openStore(ctx, dsn, cfg, mayCreate)
	if err != nil {
		return nil, err
	}
	srv.store = st
	srv.closers = append(srv.closers, func() { st.Close() })
	srv.start.step("store open")
	if f.bodies == bodiesFile {
		// Bodies are served as scanned (the last good version of a broken
		// edit included) from a temporary file rather than the heap: 3 KB
		// a skill is 150 MB at 50,000 skills.
		bf, err := skill.NewBodyFile("", 0)
		if err != nil {
			logger.Warn("skill bodies are held in memory", "err", err)
		} else {
			opts.Scan.Bodies = bf
			srv.closers = append(srv.closers, func() { bf.Close() })
		}
	}
	opts.Store = storeProvider(st)
	opts.Pins = service.StorePins(st)
	var pluginDiags []skill.Diagnostic
	if cfg != nil && len(cfg.Plugins) > 0 {
		opts.Plugins, opts.PluginOrder, pluginDiags = pluginProviders(ctx, cfg.Plugins, st)
	}
	rm, remoteDiags, err := openRemotes(ctx, e.getenv, cfg, dsn, opts.Scan)
	if err != nil {
		srv.close()
		return nil, err
	}
	opts.Remotes = remoteProviders(rm)
	pluginDiags = append(pluginDiags, remoteDiags...)
	start := time.Now()
	restoreProcs := raiseProcsForScan(e)
	cat, err := catalog.New(ctx, specs, opts)
	restoreProcs()
	if err != nil {
		srv.close()
		return nil, err
	}
	cat.AddDiagnostics(pluginDiags)
	srv.start.step("catalog scanned")
	srv.mem.catalogLoaded()
	srv.start.step("collected")
	server, _ := st.(store.Server)
	svcOpt := service.Options{Store: st, Server: server, Logger: logger}
	if cfg != nil {
		svcOpt.Limits = limitsOf(cfg)
		svcOpt.Review = service.ReviewOptions{Required: cfg.Review.Required, AllowSelf: cfg.Review.Distinct != nil && !*cfg.Review.Distinct}
		svcOpt.Receipts = retentionOf(cfg)
		svcOpt.Sessions = service.SessionOptions{Max: cfg.Server.UISessions, PerToken: cfg.Server.UISessionsPerToken,
			Idle: time.Duration(cfg.Server.UISessionIdle), Lifetime: time.Duration(cfg.Server.UISessionLifetime)}
		svcOpt.Listing = listingOf(cfg)
		svcOpt.Safety = cfg.SafetyPolicy()
		pub, err := publisherOf(cfg)
		if err != nil {
			return nil, err
		}
		svcOpt.Publisher = pub
	}
	srv.svc = service.New(cat, svcOpt)
	if ss, ok := st.(*sqlstore.Store); ok {
		// Writes follow the safety policy of the config as reloaded.
		ss.Gate = func(b *skill.Bundle, d *skill.Document) ([]skill.Diagnostic, []skill.Diagnostic) {
			return safety.Gate(srv.svc.SafetyPolicy())(b, d)
		}
	}
	srv.closers = append(srv.closers, func() { srv.svc.Close() })
	errs := 0
	for _, d := range cat.Diagnostics() {
		if d.Severity == skill.Error {
			errs++
		}
	}
	logger.Info("catalog loaded", "config", pathOr(cfg), "store", redact(dsn), "skills", len(cat.Global().Names()),
		"agents", len(cat.AgentIDs()), "diagnostics", len(cat.Diagnostics()), "errors", errs, "took", time.Since(start).Round(time.Millisecond))
	dl := newDiagLogger(logger)
	dl.log(cat, "start")
	srv.start.step("diagnostics logged")

	wctx, cancel := context.WithCancel(ctx)
	srv.closers = append(srv.closers, cancel)
	dl.follow(wctx, srv.svc, srv.start.up)
	remotes := &remoteState{noWatch: f.noWatch}
	remotes.start(wctx, srv.svc, rm, cfg, logger)
	if cfg != nil && cfg.Audit.KeepDays > 0 {
		go pruneAuditLoop(wctx, srv.svc, cfg.Audit.KeepDays, logger)
	}
	var folders *folderWatch
	if !f.noWatch {
		wopt := watch.Options{Logger: logger}
		if cfg != nil {
			wopt.MaxWatches, wopt.PollInterval = cfg.Watch.MaxWatches, cfg.Watch.Interval()
		}
		folders = &folderWatch{svc: srv.svc, logger: logger, opt: wopt, since: start}
		srv.closers = append(srv.closers, folders.close)
		// Until the watch is up, the settling memory rule applies. Its
		// set-up waits for ready: it walks every folder again. (A config
		// reload before then starts it on the new roots.)
		settled := srv.mem.background()
		srv.start.after(wctx, func() { folders.start(wctx, srv.svc.Catalog().Roots(), settled) })
	}
	if cfg != nil && cfg.Path != "" {
		// The config is read again on SIGHUP, on POST /v1/reload and when
		// the file changes.
		data, _ := os.ReadFile(cfg.Path)
		r := &configReloader{path: cfg.Path, flags: f, getenv: e.getenv, svc: srv.svc, logger: logger,
			base: opts, folders: folders, start: cfg, data: data, life: wctx, remotes: remotes, dsn: dsn}
		srv.svc.SetReloader(r.reload)
		r.watchConfig(wctx, f.noWatch)
	} else {
		// With no config file SIGHUP rescans the folders; it never stops
		// the server.
		ignoreHUP(wctx, srv.svc)
	}
	if server != nil {
		// Writes through this server refresh the catalog themselves: follow
		// only the other instances' changes, so none is applied twice.
		ch, err := store.ChangesByOthers(wctx, server)
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
	fs := newFlags(e, "serve", "[--addr HOST:PORT] [--config F | --root DIR... | --demo | FOLDER...] [--db D] [--stateless] [--no-watch] [--allowed-host H]...",
		"Serves every agent its loadout: the HTTP API under /v1, MCP at /mcp (every skill) and\n/agents/ID/mcp (one agent), and the well-known skills indexes. With no flags it uses\n./loadout.json (--demo: the built-in examples), SQLite beside it, and 127.0.0.1:7777. It refuses a\nnon-loopback address unless tokens exist ('loadout token create'); once any token exists,\nevery request needs one. It answers only to loopback names, its own address and\n--allowed-host names in the Host header, and refuses POST, PUT and DELETE from other\norigins' web pages. The config file is read again when it changes, on SIGHUP and on\nPOST /v1/reload: agents, sources, budget, format and scan limits take effect at once; a\nconfig that does not load keeps the running one (the log says why); store, server, plugins,\nwatch, receipts, storeLimits, oidc, mcpAuth and tracing are logged as needing a restart. On SIGINT/SIGTERM it\ndrains: GET /readyz answers 503 at once, it goes on serving for server.shutdownDelay,\nthen stops accepting and lets requests in flight finish within server.shutdownTimeout;\nthen it stops cleanly, receipts saved."+fmt.Sprintf(folderArgsHelp, "serve"))
	f.register(fs)
	fs.StringVar(&f.addr, "addr", "127.0.0.1:7777", "address to listen on")
	fs.BoolVar(&f.stateless, "stateless", false, "stateless MCP sessions, for several instances behind a load balancer")
	f.net.register(fs)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	f.folderArgs(fs)
	// life is the server's own lifetime: what it starts (the store's
	// feeds, the warm-up, every request's context) ends with it. A signal
	// before it serves ends it at once; once it serves, a signal begins
	// the drain (serve_drain.go), and life ends only after the requests
	// in flight are done, so that they finish rather than see their
	// context cancelled.
	life, endLife := context.WithCancel(context.WithoutCancel(ctx))
	defer endLife()
	early := context.AfterFunc(ctx, endLife)
	srv, err := startServer(life, e, &f, "")
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
	// With an identity provider configured people sign in: the server is
	// never open, on loopback or not, whether or not tokens exist.
	people := srv.cfg != nil && srv.cfg.OIDC != nil
	if !loopback(host) && !tokens && !people {
		return fail(e, fmt.Errorf("refusing to listen on %s without tokens: anyone on the network could read every skill. Create one with '%s', or listen on 127.0.0.1", f.addr, tokenCreateHint(srv.dsn, "--scope admin")))
	}
	srv.svc = withTokens(srv, tokens || people)
	followTokens(life, srv, tokens || people, !loopback(host) || people)

	ns, err := f.net.resolve(srv.cfg)
	if err != nil {
		return fail(e, err)
	}
	if ns.maxConnsPerIP >= ns.maxConns {
		srv.logger.Warn("max-conns-per-ip is not under max-conns: one client can take every connection", "max_conns", ns.maxConns, "max_conns_per_ip", ns.maxConnsPerIP)
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fail(e, err)
	}
	guard := httpapi.GuardOptions{Listen: ln.Addr().String(), AllowedHosts: ns.allowedHosts, AllowedOrigins: ns.allowedOrigins}
	if ip := net.ParseIP(host); ip == nil && host != "" {
		// --addr named a host: clients use that name.
		guard.AllowedHosts = append(guard.AllowedHosts, host)
	}
	var limits skill.Limits
	if srv.cfg != nil {
		limits = limitsOf(srv.cfg)
	}
	// Traces, when the config names a collector (tracing.go); flushed
	// when serve returns, after the requests in flight are finished.
	stopTracing, err := startTracing(srv.cfg, srv.logger)
	if err != nil {
		ln.Close()
		return fail(e, err)
	}
	defer stopTracing()
	signIn, err := signInOptions(srv.cfg, e.getenv)
	if err != nil {
		ln.Close()
		return fail(e, err)
	}
	ready := httpapi.NewReadiness()
	oauth, err := resourceServerOf(srv.cfg)
	if err != nil {
		ln.Close()
		return fail(e, fmt.Errorf("mcpAuth: %w", err))
	}
	if oauth != nil {
		oauth.Verifier().Prefetch(ctx)
		srv.logger.Info("MCP authorization: the MCP endpoints take access tokens of the configured authorization servers beside loadout tokens", "issuers", strings.Join(oauth.Issuers(), ","))
	}
	sessions := mcpserver.NewSessions(ns.mcpSessions, ns.mcpSessionIdle, srv.logger).PerToken(ns.mcpPerToken)
	mx, err := serverMetrics(srv, sessions)
	if err != nil {
		ln.Close()
		return fail(e, err)
	}
	handler, _, err := serverHandler(srv.svc, srv.logger, handlerOptions{
		signIn: signIn, stateless: f.stateless, limits: limits, guard: guard, timeouts: ns.timeouts, ready: ready, start: srv.start.up,
		sessions: sessions, metrics: mx, oauth: oauth,
	})
	if err != nil {
		ln.Close()
		return fail(e, err)
	}
	if srv.cfg != nil {
		if _, err := startMetricsListener(ctx, srv.cfg.Metrics, mx, srv.logger); err != nil {
			ln.Close()
			return fail(e, err)
		}
	}
	srv.start.step("handlers built")
	streams, endStreams := context.WithCancel(life)
	defer endStreams()
	hs := &http.Server{Handler: endingStreams(handler, streams), ReadHeaderTimeout: ns.readHeaderTimeout, IdleTimeout: ns.idleTimeout,
		MaxHeaderBytes: maxHeaderBytes, BaseContext: func(net.Listener) context.Context { return life }}
	srv.logger.Info("client bounds", "max_conns", ns.maxConns, "max_conns_per_ip", ns.maxConnsPerIP,
		"read_header_timeout", ns.readHeaderTimeout, "read_timeout", ns.timeouts.Read, "write_timeout", ns.timeouts.Write,
		"idle_timeout", ns.idleTimeout, "mcp_sessions", ns.mcpSessions, "mcp_sessions_per_token", ns.mcpPerToken, "mcp_session_idle", ns.mcpSessionIdle,
		"allowed_hosts", strings.Join(guard.AllowedHosts, ","), "allowed_origins", strings.Join(ns.allowedOrigins, ","))
	limited := httpapi.LimitListener(ln, httpapi.ConnLimits{Max: ns.maxConns, MaxPerIP: ns.maxConnsPerIP, Logger: srv.logger})
	// Over a bound, a new connection replaces one that has sent no request
	// (one client on loopback or behind a proxy cannot lock the rest out).
	limited.Track(hs)
	ln = limited
	base, others := bannerBase(ln.Addr())
	banner(e, f.logJSON, srv.logger, srv.svc, base, others, tokens || people, srv.dsn)
	// What first requests would build is built now (serve_warm.go); a
	// request meanwhile waits for the build under way.
	// They grow the heap (the install indexes above all), so the
	// collector's lasting rule is measured again once they are built:
	// measured before them, its limit sat just above the grown heap and
	// the collector ran back to back (47% of a spread load's CPU).
	warmed := srv.mem.background()
	go func() {
		ready.Run(life, srv.logger, warmJobs(srv)...)
		warmed()
	}()
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	// Listening: the listener is open and serving; the safety pass, the
	// folder watch and the MCP endpoints' first renders start now
	// (startup.go), beside the warm-up (ready once it is done).
	srv.start.listening()
	// The collector's rule for serving, after listening, since its
	// collection and hand-back of start-up's garbage (0.3 s of CPU at
	// 50,000 skills) need not hold requests off.
	srv.mem.loaded(srv.logger)
	// Serving: from now on a signal drains rather than ending life at
	// once (a signal that came already drains at once below).
	early()
	select {
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(e, err)
		}
	case <-ctx.Done():
		drainServer(hs, done, ready, endStreams, ns.shutdownDelay, ns.shutdownTimeout, srv.logger)
	}
	endLife()
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

// followTokens keeps token checking in step with the store while serve
// runs: created and revoked tokens, by any command or instance, switch it
// within the store's token feed delay (SQLite: a 200 ms poll; PostgreSQL:
// LISTEN/NOTIFY). Off loopback it never switches off: with the last token
// revoked, every request is refused rather than the server left open.
func followTokens(ctx context.Context, srv *server, on, public bool) {
	ss, ok := srv.store.(store.Server)
	if !ok {
		return
	}
	ch, err := ss.TokenChanges(ctx)
	if err != nil {
		srv.logger.Warn("tokens created or revoked from now on take effect at restart only", "err", err)
		return
	}
	go func() {
		for range ch {
			ts, err := ss.Tokens(ctx)
			if err != nil {
				if ctx.Err() == nil {
					srv.logger.Warn("cannot read tokens after a change; token checking stays as it was", "required", on, "err", err)
				}
				continue
			}
			want := len(ts) > 0 || public
			if want == on {
				continue
			}
			on = want
			srv.svc.RequireTokens(on)
			if on {
				srv.logger.Warn("a token was created: every request now needs one", "tokens", len(ts))
			} else {
				srv.logger.Warn("the last token was revoked: loopback requests need none again", "tokens", 0)
			}
		}
	}()
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// handlerOptions configure serverHandler.
type handlerOptions struct {
	stateless bool
	limits    skill.Limits
	guard     httpapi.GuardOptions
	timeouts  httpapi.TimeoutOptions
	sessions  *mcpserver.Sessions  // shared by every MCP endpoint
	ready     *httpapi.Readiness   // nil: no warm-up (GET /readyz is 200)
	signIn    *webui.SignInOptions // nil: the UI signs in with tokens only
	// start, when set, is closed once the server is up: the MCP
	// endpoints render their first instructions then (mcpserver.Options.Start).
	start <-chan struct{}
	// oauth, when set, makes the MCP endpoints an OAuth resource server
	// (mcpauth.go).
	oauth *identity.ResourceServer
	// metrics, when set, serves GET /metrics and measures every request
	// (serve_metrics.go).
	metrics *metrics.Metrics
}

// serverHandler composes the API, MCP and well-known handlers behind the
// timeouts, request ids, logging, the Host and origin guard, and
// authentication, in that order from the outside.
func serverHandler(svc *service.Service, logger *slog.Logger, o handlerOptions) (http.Handler, *agentMounts, error) {
	mcpOpt := func(id string) mcpserver.Options {
		return mcpserver.Options{Agent: id, Stateless: o.stateless, Logger: logger, Sessions: o.sessions, HostChecked: true, Start: o.start}
	}
	mux := http.NewServeMux()
	apiOpt := httpapi.Options{Logger: logger, Limits: o.limits, Ready: o.ready}
	var measure httpapi.RequestObserver // a nil interface, not a nil *Metrics
	if o.metrics != nil {
		apiOpt.Metrics, measure = o.metrics.Handler(), o.metrics
	}
	apiH := httpapi.New(svc, apiOpt)
	mux.Handle("/", apiH)
	// Each MCP handler renders its agent's listing once, after o.start
	// when it is set (0.5 s of CPU at 50,000 skills, computing the
	// listing's domains most of it); the global one is built while the
	// agents' are.
	global := make(chan http.Handler, 1)
	go func() { global <- mcpserver.HTTPHandler(svc, mcpOpt(catalog.GlobalID)) }()
	agents := newAgentMounts(svc, func(id string) *agentHandlers {
		return &agentHandlers{
			mcp:   mcpserver.HTTPHandler(svc, mcpOpt(id)),
			index: http.StripPrefix("/agents/"+id, wellknown.Handler(svc, id)),
		}
	})
	mux.Handle("/mcp", <-global)
	mux.Handle("/.well-known/", wellknown.Handler(svc, catalog.GlobalID))
	mux.HandleFunc("/agents/{id}/mcp", func(w http.ResponseWriter, r *http.Request) {
		if h := agents.lookup(w, r); h != nil {
			h.mcp.ServeHTTP(w, r)
		}
	})
	mux.HandleFunc("/agents/{id}/.well-known/", func(w http.ResponseWriter, r *http.Request) {
		if h := agents.lookup(w, r); h != nil {
			h.index.ServeHTTP(w, r)
		}
	})
	// Link URLs (/i/TOKEN/.well-known/…) carry their own token, so they
	// are routed before the bearer check, to the agents' index mounts.
	top := http.NewServeMux()
	api := httpapi.Auth(svc, apiRoute(mux, apiH))
	var oauth *mcpAuth
	if o.oauth != nil {
		oauth = &mcpAuth{svc: svc, rs: o.oauth, api: api, mux: mux, logger: logger}
		// The OAuth discovery paths not served below (the suffix forms,
		// /agents/ID/mcp/.well-known/…) name the authorization servers
		// instead of saying loadout takes bearer tokens only.
		top.Handle("/", oauth.discoveryOr(api))
	} else {
		top.Handle("/", api)
	}
	// The UI authenticates by its own session cookie; GET / sends a
	// browser to it and anything else to the API's index.
	ui := webui.New(svc, webui.Options{Logger: logger, SignIn: o.signIn})
	top.Handle(webui.Prefix, ui)
	if o.metrics != nil {
		o.metrics.WatchSessions(nil, func() int { return webui.LiveStreams(ui) })
	}
	top.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if webui.WantsHTML(r) {
			http.Redirect(w, r, webui.Prefix, http.StatusFound)
			return
		}
		api.ServeHTTP(w, r)
	})
	top.Handle(wellknown.LinkPrefix, wellknown.Link(svc, mux))
	if m := oauth; m != nil {
		top.Handle("/mcp", m)
		top.Handle("/agents/{id}/mcp", m)
		top.HandleFunc(identity.PRMPrefix, m.servePRM)
		top.HandleFunc(identity.PRMPrefix+"/", m.servePRM)
	}
	guarded, err := httpapi.Guard(o.guard, apiRoute(top, api))
	if err != nil {
		return nil, nil, err
	}
	// A span (and any observer's mark) per request, named by the route
	// pattern that matched: the API's, else MCP's and the indexes', else
	// the UI's.
	traced := httpapi.Trace(httpapi.RouteOf(apiH, mux, top), guarded)
	return httpapi.Timeouts(o.timeouts, httpapi.RequestID(httpapi.Log(logger, httpapi.Measure(measure, traced)))), agents, nil
}

// agentMounts holds what /agents/{id}/… serves for each configured agent:
// its MCP server and its well-known index. Handlers are made for every
// agent at start, and for an agent a reload adds when it is first asked
// for. Any other id is answered by the scope check (404 for an admin, the
// usual 403 for another agent's token) before anything is made or kept,
// so what is held is bounded by the configured agents, whatever ids
// clients send.
type agentMounts struct {
	svc   *service.Service
	build func(id string) *agentHandlers

	mu sync.RWMutex
	m  map[string]*agentHandlers
}

type agentHandlers struct{ mcp, index http.Handler }

func newAgentMounts(svc *service.Service, build func(id string) *agentHandlers) *agentMounts {
	a := &agentMounts{svc: svc, build: build, m: map[string]*agentHandlers{}}
	ids := svc.Catalog().AgentIDs()
	built := make([]*agentHandlers, len(ids))
	// Built at once, as many at a time as there are Ps: each renders
	// its agent's listing.
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			built[i] = build(id)
		}()
	}
	wg.Wait()
	for i, id := range ids {
		a.m[id] = built[i]
	}
	return a
}

// lookup returns the handlers of the request's agent, or writes the
// refusal and returns nil.
func (a *agentMounts) lookup(w http.ResponseWriter, r *http.Request) *agentHandlers {
	id := r.PathValue("id")
	if _, err := a.svc.Loadout(service.PrincipalFrom(r.Context()), id); err != nil {
		httpapi.WriteError(w, err)
		return nil
	}
	a.mu.RLock()
	h := a.m[id]
	a.mu.RUnlock()
	if h != nil {
		return h
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if h = a.m[id]; h == nil {
		h = a.build(id)
		a.m[id] = h
	}
	return h
}

// len is the number of agents with handlers.
func (a *agentMounts) len() int {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.m)
}

// bannerBase is the base URL the banner prints for the listen address: on
// an unspecified address (0.0.0.0, ::), which no client can dial, the
// loopback address of its family, and the machine's other addresses.
func bannerBase(a net.Addr) (base string, others []string) {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String(), nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsUnspecified() {
		return "http://" + a.String(), nil
	}
	// Go listens on both families for 0.0.0.0 and :: alike (the address
	// reads [::]), so IPv4 loopback reaches it.
	local := "127.0.0.1"
	addrs, _ := net.InterfaceAddrs()
	for _, ad := range addrs {
		if n, ok := ad.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() && len(others) < 4 {
			others = append(others, "http://"+net.JoinHostPort(n.IP.String(), port))
		}
	}
	return "http://" + net.JoinHostPort(local, port), others
}

// plural is "1 skill", "2 skills".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func printURLs(e *env, svc *service.Service, base string, others []string, tokens bool, dsn string) {
	fmt.Fprintf(e.stderr, "loadout is serving %s to %s\n", plural(len(svc.Catalog().Global().Names()), "skill", "skills"), plural(len(svc.Catalog().AgentIDs()), "agent", "agents"))
	fmt.Fprintf(e.stderr, "  UI:           %s/ui/\n", base)
	fmt.Fprintf(e.stderr, "  API:          %s/v1/skills  (OpenAPI: %s/v1/openapi.json)\n", base, base)
	fmt.Fprintf(e.stderr, "  MCP:          %s/mcp  (every skill)\n", base)
	ids := svc.Catalog().AgentIDs()
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(e.stderr, "  %-14s%s/agents/%s/mcp\n", "MCP "+id+":", base, id)
	}
	fmt.Fprintf(e.stderr, "  index:        %s/.well-known/agent-skills/index.json\n", base)
	fmt.Fprintf(e.stderr, "  endpoints:    %s/  (an index of every route)\n", base)
	if len(others) > 0 {
		fmt.Fprintf(e.stderr, "  listening on every address; from other machines: %s (a DNS name needs --allowed-host)\n", strings.Join(others, ", "))
	}
	if tokens {
		fmt.Fprintln(e.stderr, "  tokens are required: send Authorization: Bearer TOKEN")
	} else {
		fmt.Fprintf(e.stderr, "  no tokens exist, so loopback requests need none ('%s' to require them)\n", tokenCreateHint(dsn, "--scope admin"))
	}
}

func runMCP(ctx context.Context, e *env, args []string) int {
	var f serverFlags
	fs := newFlags(e, "mcp", "[--config F --agent ID | --root DIR... | --demo | FOLDER...] [--db D]",
		"Serves one agent's skills over MCP on stdin and stdout, for hosts that start MCP servers\nas commands. Logs go to stderr."+fmt.Sprintf(folderArgsHelp, "mcp"))
	f.register(fs)
	fs.StringVar(&f.agent, "agent", "", "agent `id` (default: every skill)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	f.folderArgs(fs)
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
	srv.mem.loaded(srv.logger)
	srv.start.listening()
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

// warmSearch builds every agent's search index, then the global one's, in
// the background as the server starts: the first search_skills would
// otherwise build it (1.5 s at 10,000 skills). A search that comes first
// waits for the build under way.
func warmSearch(ctx context.Context, cat *catalog.Catalog) {
	for _, l := range append(cat.Agents(), cat.Global()) {
		if ctx.Err() != nil {
			return
		}
		l.WarmSearch()
	}
}
