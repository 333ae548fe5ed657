package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/watch"
)

// configDebounce is how long the config file must stay quiet after a
// change before it is read again: an editor's save (write, rename, chmod)
// is one reload.
const configDebounce = 250 * time.Millisecond

// configReloader re-reads the config file serve and mcp started from, on
// SIGHUP, on POST /v1/reload and when the file changes. A config that does
// not load keeps the running one, with one log line saying why (file,
// field). A good one replaces the agents and sources (and the scan limits,
// budget and format) and rebuilds the catalog; settings read only at start
// (store, server, plugins, watch, receipts, storeLimits, metrics) are logged as
// needing a restart when they differ.
type configReloader struct {
	path   string
	flags  *serverFlags
	getenv func(string) string
	svc    *service.Service
	logger *slog.Logger
	// base holds what a reload keeps from start: the store and the
	// plugins' providers.
	base    catalog.Options
	folders *folderWatch
	// life is the server's lifetime: a reload runs, and the watches it
	// starts live, in it, not in the context of what asked for the reload
	// (a POST /v1/reload ends with its request).
	life context.Context

	// start is the config serve started with: settings read only at
	// start are compared with it, on every reload, until a restart.
	start *config.File

	// remotes are the remote sources; a reload that changes them opens
	// new ones (dsn decides the default cache folder).
	remotes *remoteState
	dsn     string

	mu   sync.Mutex
	data []byte // the file's bytes at the last good load
}

// reload reads the config again and applies it; why says what asked.
func (r *configReloader) reload(rctx context.Context, why string) error {
	// The server's life, not the request's (a reload is not cut short by
	// its client); traced as part of the request that asked, if any.
	ctx := obs.Carry(r.life, rctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	data, _ := os.ReadFile(r.path)
	nf, err := config.Load(r.path)
	if err != nil {
		r.logger.Error("config not reloaded: keeping the running one", "code", "config_invalid", "why", why, "config", r.path, "err", err)
		return configRefused(err)
	}
	r.restartNeeded(nf)
	specs, opts := r.flags.agentSpecs(nf)
	opts.Scan.KeepBodies, opts.Scan.Bodies = true, r.base.Scan.Bodies
	opts.Store, opts.Plugins, opts.PluginOrder, opts.Pins = r.base.Store, r.base.Plugins, r.base.PluginOrder, r.base.Pins
	rm := r.remotes.m
	var remoteDiags []skill.Diagnostic
	if !sameRemotes(r.remotes.cfg, nf) {
		// Other remote sources: open them (new ones are synced and pinned)
		// before the catalog is rebuilt over them.
		m, diags, err := openRemotes(ctx, r.getenv, nf, r.dsn, opts.Scan)
		if err != nil {
			r.logger.Error("config not reloaded: keeping the running one", "code", "config_invalid", "why", why, "config", r.path, "err", err)
			return configRefused(err)
		}
		rm, remoteDiags = m, diags
	}
	if rm != nil && rm == r.remotes.m {
		// The same sources: serve what the lock pins now (another process
		// may have moved it); the rebuild below reads it.
		r.remotes.followLock(ctx, r.svc, r.logger, why, false)
	}
	opts.Remotes = remoteProviders(rm)
	if err := r.svc.Reconfigure(ctx, why, specs, opts); err != nil {
		r.logger.Error("config not reloaded: keeping the running one", "code", "config_invalid", "why", why, "config", r.path, "err", err)
		return configRefused(err)
	}
	if rm != r.remotes.m {
		r.svc.Catalog().AddDiagnostics(remoteDiags)
		r.remotes.start(ctx, r.svc, rm, nf, r.logger)
	}
	r.data = data
	r.svc.SetListing(ctx, listingOf(nf))
	r.svc.SetSafety(nf.SafetyPolicy())
	cat := r.svc.Catalog()
	r.logger.Info("config reloaded", "why", why, "config", r.path, "agents", len(cat.AgentIDs()), "skills", len(cat.Global().Names()))
	if r.folders != nil {
		r.folders.follow(ctx, cat.Roots())
	}
	return nil
}

// configRefused is what POST /v1/reload answers when the config does not
// load: invalid, naming the file and field, the running config kept.
func configRefused(err error) error {
	return &service.Error{Code: service.CodeInvalid, Message: "config not reloaded, the running one is kept: " + err.Error(), Err: err}
}

// changed reports whether the file's bytes differ from the last good load
// (a touch or chmod is not a change).
func (r *configReloader) changed() bool {
	data, err := os.ReadFile(r.path)
	r.mu.Lock()
	defer r.mu.Unlock()
	return err != nil || !bytes.Equal(data, r.data)
}

// restartNeeded logs each setting that differs from the running one but
// is read only at start.
func (r *configReloader) restartNeeded(nf *config.File) {
	old := r.start
	storeFixed := r.flags.db != "" || r.getenv("LOADOUT_DB") != ""
	for _, x := range []struct {
		field string
		same  bool
	}{
		{"store", storeFixed || old.Store == nf.Store},
		{"server", reflect.DeepEqual(old.Server, nf.Server)},
		{"plugins", slices.Equal(old.Plugins, nf.Plugins)},
		{"watch", reflect.DeepEqual(old.Watch, nf.Watch)},
		{"receipts", reflect.DeepEqual(old.Receipts, nf.Receipts)},
		{"audit", old.Audit == nf.Audit},
		{"storeLimits", reflect.DeepEqual(old.StoreLimits, nf.StoreLimits)},
		{"storePool", reflect.DeepEqual(old.StorePool, nf.StorePool)},
		{"tracing", reflect.DeepEqual(old.Tracing, nf.Tracing)},
		{"oidc", reflect.DeepEqual(old.OIDC, nf.OIDC)},
		{"mcpAuth", reflect.DeepEqual(old.MCPAuth, nf.MCPAuth)},
		{"metrics", old.Metrics == nf.Metrics},
	} {
		if !x.same {
			r.logger.Warn("config change needs a restart to take effect; the running value stays until then", "code", "restart_needed", "config", r.path, "field", x.field)
		}
	}
}

// watchConfig reloads the config on SIGHUP and, unless noWatch, when the
// file changes (its folder is watched, so an editor's rename-and-replace
// is seen), until ctx ends.
func (r *configReloader) watchConfig(ctx context.Context, noWatch bool) {
	onHUP(ctx, func() { _ = r.svc.Reload(ctx, "SIGHUP") }) // logged; through the service, so it is audited
	if noWatch {
		return
	}
	watchFile(ctx, r.path, []string{"..data"}, r.logger, "config",
		"the config file is not watched: reload it with SIGHUP or POST /v1/reload",
		func() {
			if r.changed() {
				_ = r.svc.Reload(ctx, "config file changed") // logged and audited
			}
		})
}

// watchFile calls changed, debounced, whenever the file at path (or a
// name in also, in its folder) changes, until ctx ends. The folder is
// watched, not the file, so that the rename-and-replace of an editor or
// of an atomic write is seen. ("..data" is the symlink a Kubernetes
// ConfigMap swaps.) When no watch can be set up, unwatched is logged as
// a warning with what under the key what.
func watchFile(ctx context.Context, path string, also []string, logger *slog.Logger, what, unwatched string, changed func()) {
	w, err := fsnotify.NewWatcher()
	if err == nil {
		err = w.Add(filepath.Dir(path))
	}
	if err != nil {
		logger.Warn(unwatched, what, path, "err", err)
		if w != nil {
			w.Close()
		}
		return
	}
	base := filepath.Base(path)
	go func() {
		defer w.Close()
		var timer <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if n := filepath.Base(ev.Name); n == base || slices.Contains(also, n) {
					timer = time.After(configDebounce)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				logger.Warn("watching the "+what+" file", what, path, "err", err)
			case <-timer:
				timer = nil
				changed()
			}
		}
	}()
}

// folderWatch watches the catalog's skill folders for live reload, and
// starts over on the new folders when a config reload changes them.
type folderWatch struct {
	svc    *service.Service
	logger *slog.Logger
	opt    watch.Options
	// since is when the catalog's first scan began: the first watch
	// reports what changed after it.
	since time.Time
	// quit ends a walk under way when the server stops.
	quit                chan struct{}
	quitOnce, closeOnce sync.Once

	mu      sync.Mutex
	roots   []string
	started bool
	closed  bool
	w       *watch.Watcher
}

// start watches the catalog's first roots in the background, so the
// server serves while the watch is set up (at 50,000 skills that walks
// 200,000 folders: seconds of CPU, paced so that it yields to requests).
// What changed between the catalog's scan (since) and the watch reaching
// each folder is found by the walk itself, by change times, and is the
// watcher's first batch: the roots are not read again. (They were, once
// the watch was up: on a busy machine that rescan, and its garbage under
// the settling memory limit, cost requests a third of their throughput
// for the first 20 s.) done is called once the walk is over.
func (f *folderWatch) start(ctx context.Context, roots []string, done func()) {
	go func() {
		defer done()
		f.follow(ctx, roots)
	}()
}

// follow watches roots (unless they are the ones watched already). It
// reports whether it started a watcher.
func (f *folderWatch) follow(ctx context.Context, roots []string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || ctx.Err() != nil {
		return false
	}
	if f.w != nil && slices.Equal(f.roots, roots) {
		return false
	}
	if f.w != nil {
		f.w.Close()
		f.w = nil
	}
	var added []string
	if f.started {
		for _, r := range roots {
			if !slices.Contains(f.roots, r) {
				added = append(added, r)
			}
		}
	}
	opt := f.opt
	if !f.started {
		opt.Since = f.since
	}
	opt.Cancel = f.quitCh()
	f.roots, f.started = roots, true
	w, err := watch.New(roots, opt)
	if err != nil {
		f.logger.Warn("live reload of folders is off", "err", err)
		return false
	}
	f.w = w
	ws := w.Stats()
	f.logger.Info("watching skill folders", "folders", ws.Watched, "polled", ws.Polled, "budget", ws.Budget)
	if len(added) > 0 {
		// What changed in a new folder between the catalog's scan and the
		// watch starting is read now.
		f.svc.Refresh(ctx, added, "folders added to the config")
	}
	go func() {
		for batch := range w.Events() {
			f.svc.Refresh(ctx, batch, "files changed")
		}
	}()
	return true
}

func (f *folderWatch) quitCh() chan struct{} {
	f.quitOnce.Do(func() { f.quit = make(chan struct{}) })
	return f.quit
}

func (f *folderWatch) close() {
	// End a walk under way first: it holds f.mu.
	q := f.quitCh()
	f.closeOnce.Do(func() { close(q) })
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.w != nil {
		f.w.Close()
		f.w = nil
	}
}

// ignoreHUP makes SIGHUP rescan every source rather than stop the process
// (serving with no config file), until ctx ends.
func ignoreHUP(ctx context.Context, svc *service.Service) {
	onHUP(ctx, func() { svc.Rescan(ctx, "SIGHUP") })
}

// onHUP runs fn on every SIGHUP until ctx ends. After that SIGHUP is
// still caught, and dropped, for the life of the process, so it can
// neither stop the process nor cut the draining of requests and receipts
// short. (It used to be handed to signal.Ignore then; but Ignore first
// drops the handler, giving SIGHUP back its default action, which ends
// the process, and only then ignores it: a SIGHUP in between, right after
// a SIGTERM, killed the server in the middle of its drain.)
func onHUP(ctx context.Context, fn func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-ctx.Done():
				for range hup {
				}
			case <-hup:
				fn()
			}
		}
	}()
}
