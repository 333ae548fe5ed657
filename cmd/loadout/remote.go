package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/semrange"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/remote/gitfetch"
	"github.com/loadout/loadout/remote/ocifetch"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

func init() {
	commands["sync"] = command{"fetch remote sources (git, index, oci) and move their pins in loadout.lock", runSync}
}

// remoteFetchers make the fetchers of each kind of remote source; lim
// bounds each snapshot (an oci artifact too), o the registry requests.
func remoteFetchers(lim remote.Limits, o config.OCILimits) map[string]func(remote.Spec) (remote.Fetcher, error) {
	client := &http.Client{Timeout: 5 * time.Minute}
	oo := ocifetch.Options{ResponseTimeout: time.Duration(o.ResponseTimeout), FetchTimeout: time.Duration(o.FetchTimeout), MaxTags: o.MaxTags, Limits: lim}
	return map[string]func(remote.Spec) (remote.Fetcher, error){
		"index": func(s remote.Spec) (remote.Fetcher, error) { return remote.NewIndex(s, client) },
		"git":   func(s remote.Spec) (remote.Fetcher, error) { return gitfetch.New(s) },
		"oci":   ocifetch.NewPool(oo).New,
	}
}

// remoteCache is where snapshots are kept: the config's remote.cache, else
// remote-cache beside a SQLite store file, else the user's cache folder.
func remoteCache(f *config.File, dsn string) string {
	if f.Remote.Cache != "" {
		return f.Remote.Cache
	}
	if dsn != "" && !config.IsPostgres(dsn) {
		return filepath.Join(filepath.Dir(dsn), "remote-cache")
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "loadout", "remote")
}

// newRemotes makes the manager of the config's remote sources (nil when
// it has none). Tokens are read from the environment variables the config
// names; a variable that is not set is a warning, and the source is
// fetched without credentials.
func newRemotes(getenv func(string) string, f *config.File, dsn string, scan source.Options) (*remote.Manager, []skill.Diagnostic, error) {
	if f == nil {
		return nil, nil, nil
	}
	srcs := f.Remotes()
	if len(srcs) == 0 {
		return nil, nil, nil
	}
	var diags []skill.Diagnostic
	specs := make([]remote.Spec, 0, len(srcs))
	for _, s := range srcs {
		if s.Tags != "" {
			if _, err := semrange.Parse(s.Tags); err != nil {
				return nil, nil, fmt.Errorf("%s: remote source %s: tags %v", f.Path, s.RemoteID(), err)
			}
		}
		sp := remote.Spec{ID: s.RemoteID(), Git: s.Git, Ref: s.RemoteRef(), Paths: s.Paths, Index: s.Index, AllowedOrigins: s.AllowedOrigins,
			OCI: s.OCI, Tag: s.Tag, Digest: s.Digest, Tags: s.Tags, Insecure: s.Insecure}
		if uv, pv := s.OCITokenVars(); uv != "" {
			sp.Username, sp.Password = getenv(uv), getenv(pv)
			if sp.Username == "" || sp.Password == "" {
				sp.Username, sp.Password = "", ""
				diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: remote.CodeAuth, Path: sp.URL(),
					Message: fmt.Sprintf("remote source %s: its username and password name $%s and $%s, which are not both set; the docker config's credentials are used, if any", sp.ID, uv, pv)})
			}
		}
		if v := s.Verify; v != nil {
			sp.Verify = &remote.Verify{SSHAllowedSigners: v.SSHAllowedSigners, OpenPGPKeys: v.OpenPGPKeys, Key: v.Key,
				CertificateIdentity: v.CertificateIdentity, CertificateIdentityRegexp: v.CertificateIdentityRegexp,
				CertificateOIDCIssuer: v.CertificateOIDCIssuer, CertificateOIDCIssuerRegexp: v.CertificateOIDCIssuerRegexp, TrustedRoot: v.TrustedRoot}
		}
		if v := s.TokenVar(); v != "" {
			sp.Token = getenv(v)
			if sp.Token == "" {
				diags = append(diags, skill.Diagnostic{Severity: skill.Warning, Code: remote.CodeAuth, Path: sp.URL(),
					Message: fmt.Sprintf("remote source %s: its token names $%s, which is not set; it is fetched without credentials", sp.ID, v)})
			}
		}
		specs = append(specs, sp)
	}
	lim := remote.DefaultLimits
	if f.Remote.MaxFiles > 0 {
		lim.MaxFiles = f.Remote.MaxFiles
	}
	if f.Remote.MaxFileSize > 0 {
		lim.MaxFileBytes = f.Remote.MaxFileSize
	}
	if f.Remote.MaxTotalSize > 0 {
		lim.MaxBytes = f.Remote.MaxTotalSize
	}
	m, err := remote.NewManager(specs, remote.Options{Cache: remoteCache(f, dsn), LockPath: f.LockPath(), Limits: lim, Scan: scan,
		Fetchers: remoteFetchers(lim, f.Remote.OCI), Gate: safetyRefusals(policyOf(f)), Review: f.Review.Required})
	if err != nil {
		return nil, nil, err
	}
	return m, diags, nil
}

// remoteProviders are the manager's sources as catalog providers.
func remoteProviders(m *remote.Manager) map[string]catalog.Provider {
	if m == nil {
		return nil
	}
	out := map[string]catalog.Provider{}
	for _, s := range m.Specs() {
		out[s.ID] = m.Provider(s.ID)
	}
	return out
}

// remotesService is a remote.Manager as the service's Remotes.
type remotesService struct {
	m     *remote.Manager
	every map[string]string
	// refresh reads the remote sources into the catalog again (the
	// service does so itself when a pin moves).
	refresh func(ctx context.Context, why string)
	// policy is the safety policy a change under review is checked with.
	policy *safety.Policy
}

func (r remotesService) Sync(ctx context.Context, ids ...string) []service.SourceSync {
	var out []service.SourceSync
	var served []string
	for _, c := range r.m.Sync(ctx, ids...) {
		out = append(out, sourceSync(c))
		if c.Served && !c.Moved {
			served = append(served, c.ID)
		}
	}
	if len(served) > 0 && r.refresh != nil {
		// The pin did not move, but what is served did (it failed to
		// load before, or another process moved the lock to it).
		r.refresh(ctx, "remote sync: "+strings.Join(served, ", ")+" served at its pin")
	}
	return out
}

func sourceSync(c remote.Change) service.SourceSync {
	s := service.SourceSync{ID: c.ID, From: c.From, To: c.To, FromDigest: c.FromDigest, ToDigest: c.ToDigest, Moved: c.Moved,
		Pending: c.Pending, Rejected: c.Rejected, Added: orNone(c.Added), Removed: orNone(c.Removed),
		Changed: orNone(c.Changed), Digests: c.Digests, Summary: c.Summary()}
	if c.Err != nil {
		s.Error, s.Code = c.Err.Error(), remote.CodeOf(c.Err)
	}
	return s
}

func orNone(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (r remotesService) Status() []service.SourceStatus {
	var out []service.SourceStatus
	for _, s := range r.m.Specs() {
		st := service.SourceStatus{ID: s.ID, Kind: s.Kind(), URL: s.URL(), Ref: s.Ref, Paths: s.Paths, Every: r.every[s.ID], Error: r.m.LastError(s.ID)}
		if p := r.m.Pin(s.ID); p != nil && p.Same(s) {
			st.Revision, st.Digest, st.Synced = p.Revision, p.Digest, p.Synced
			if g := p.Signer; g != nil {
				st.Signer = &service.SourceSigner{Kind: g.Kind, Key: g.Key, Identity: g.Identity, Issuer: g.Issuer}
			}
		}
		// Skills is what is served, not what the pin lists: a source that
		// failed to open serves none, and Error says why.
		_, _, st.Skills = r.m.Snapshot(s.ID)
		out = append(out, st)
	}
	return out
}

// everyOf is each remote source's sync interval, by id.
func everyOf(f *config.File) map[string]string {
	out := map[string]string{}
	if f == nil {
		return out
	}
	for _, s := range f.Remotes() {
		if s.Every != "" {
			out[s.RemoteID()] = s.Every
		}
	}
	return out
}

// minSyncEvery is the shortest schedule scheduleSyncs keeps
// (catalog.MinEvery; tests shorten it).
var minSyncEvery = catalog.MinEvery

// scheduleSyncs syncs each source with an interval ("every") on that
// schedule until ctx ends; a sync that moves a pin refreshes the catalog
// (SyncSources), which clients hear of as any live change.
func scheduleSyncs(ctx context.Context, svc *service.Service, every map[string]string, logger *slog.Logger) {
	sched := service.Principal{Name: "scheduled sync", Scopes: []string{"admin"}}
	for id, ev := range every {
		d, err := time.ParseDuration(ev)
		if err != nil || d < minSyncEvery {
			continue // the config check refused it already
		}
		go func() {
			t := time.NewTicker(d)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				res, err := svc.SyncSources(ctx, sched, id)
				switch {
				case err != nil:
					logger.Warn("scheduled sync", "source", id, "error", err)
				case res[0].Error != "":
					logger.Warn("scheduled sync failed; the last good snapshot is served", "source", id, "code", res[0].Code, "error", res[0].Error)
				case res[0].Moved:
					logger.Info("scheduled sync moved a pin", "source", id, "summary", res[0].Summary)
				}
			}
		}()
	}
}

func runSync(ctx context.Context, e *env, args []string) int {
	var cf catalogFlags
	var check, asJSON, pending bool
	var approve, reject, revision, comment string
	fs := newFlags(e, "sync", "[--config F] [--check] [--json] [ID...] | --pending | --approve ID | --reject ID [--revision R] [--comment C]",
		"Fetches the config's remote sources (git repositories and skill indexes) at what their refs\n"+
			"point at now, validates each new snapshot beside the current one, swaps it in and moves its\n"+
			"pin in loadout.lock; prints what changed (skills added, removed and changed, with digests).\n"+
			"A failed fetch keeps the last good snapshot and pin. With IDs, only those sources.\n"+
			"--check moves nothing: it exits 1 when a remote has moved past its pin (or has none),\n"+
			"for CI. With \"review\": {\"required\": true} in the config a sync that would move a pin\n"+
			"records the change for review instead: --pending lists what awaits review, with each skill\n"+
			"added, removed and changed; --approve ID moves the pin to exactly that change; --reject ID\n"+
			"keeps the pin and does not queue the same snapshot again.\n"+
			"Exit status: 0 done, 1 a sync failed (or --check found a change, or one awaits review), 2 usage.")
	fs.StringVar(&cf.config, "config", "", "config file (default: $LOADOUT_CONFIG, else ./loadout.json)")
	fs.StringVar(&cf.db, "db", "", "store: decides where snapshots are kept by default (see remote.cache)")
	fs.BoolVar(&check, "check", false, "report what moved without moving any pin; exit 1 when something would change")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	fs.BoolVar(&pending, "pending", false, "list the changes that await review")
	fs.StringVar(&approve, "approve", "", "move source ID's pin to its change awaiting review")
	fs.StringVar(&reject, "reject", "", "reject source ID's change awaiting review (the pin stays)")
	fs.StringVar(&revision, "revision", "", "with --approve or --reject: the revision reviewed (refused if the change is now another)")
	fs.StringVar(&comment, "comment", "", "with --reject: why")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	modes := 0
	for _, on := range []bool{check, pending, approve != "", reject != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 || (pending || approve != "" || reject != "") && fs.NArg() > 0 {
		fmt.Fprintln(e.stderr, "loadout sync: give one of --check, --pending, --approve ID and --reject ID; --pending, --approve and --reject take no other IDs")
		return 2
	}
	f, dsn, _, err := cf.resolve(e)
	if err != nil {
		return fail(e, err)
	}
	if f == nil {
		return fail(e, errors.New("no config: pass --config FILE or run where a loadout.json is; remote sources are {\"git\": URL} or {\"index\": URL} entries in an agent's skills"))
	}
	m, diags, err := newRemotes(e.getenv, f, dsn, source.Options{})
	if err != nil {
		return fail(e, err)
	}
	printDiags(e.stderr, diags)
	if m == nil {
		fmt.Fprintf(e.stderr, "%s has no remote sources: nothing to sync\n", f.Path)
		return 0
	}
	defer m.Close() // other processes may remove what this one fetched and no longer reads
	if pending || approve != "" || reject != "" {
		return reviewSources(ctx, e, m, f, dsn, pending, approve, reject, revision, comment, asJSON)
	}
	var res []remote.Change
	if check {
		res = m.Check(ctx, fs.Args()...)
	} else {
		res = m.Sync(ctx, fs.Args()...)
	}
	code := 0
	out := make([]service.SourceSync, 0, len(res))
	for _, c := range res {
		if c.Err != nil || check && (c.Moved || c.Pending) {
			code = 1
		}
		out = append(out, sourceSync(c))
	}
	if !check {
		auditSyncs(ctx, e, dsn, f, out)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.Encode(map[string]any{"check": check, "lock": f.LockPath(), "sources": out})
		return code
	}
	for _, c := range res {
		line := c.Summary()
		switch {
		case c.Err != nil:
			line += "; the last good snapshot and pin are kept"
		case check && c.Moved:
			line = strings.Replace(line, ": ", ": would move ", 1) + fmt.Sprintf(" (run `loadout sync %s` to move the pin)", c.ID)
		}
		fmt.Fprintln(e.stdout, line)
		for _, n := range c.Added {
			fmt.Fprintf(e.stdout, "  + %s %s\n", n, c.Digests[n])
		}
		for _, n := range c.Changed {
			fmt.Fprintf(e.stdout, "  ~ %s %s\n", n, c.Digests[n])
		}
		for _, n := range c.Removed {
			fmt.Fprintf(e.stdout, "  - %s (was %s)\n", n, c.Digests[n])
		}
	}
	if !check {
		fmt.Fprintf(e.stderr, "lock: %s\n", f.LockPath())
	}
	return code
}

// remoteState is serve's remote sources: the manager, the scheduled
// syncs of its sources and the watch of its lock file (restarted when a
// reload changes them).
type remoteState struct {
	// noWatch: the lock file is followed only on SIGHUP and POST
	// /v1/reload, not watched.
	noWatch bool

	mu     sync.Mutex // guards m for the lock watch
	m      *remote.Manager
	cfg    *config.File // what m was made from
	cancel context.CancelFunc
}

// sameRemotes reports whether two configs name the same remote sources
// with the same settings (a reload then keeps the manager).
func sameRemotes(a, b *config.File) bool {
	if a == nil || b == nil {
		return a == b
	}
	return reflect.DeepEqual(a.Remotes(), b.Remotes()) && reflect.DeepEqual(a.Remote, b.Remote) && a.LockPath() == b.LockPath()
}

// openRemotes makes and opens the config's remote sources for serve:
// pinned ones from their snapshots, new ones synced and pinned (serve
// writes the lock for them).
func openRemotes(ctx context.Context, getenv func(string) string, f *config.File, dsn string, scan source.Options) (*remote.Manager, []skill.Diagnostic, error) {
	m, diags, err := newRemotes(getenv, f, dsn, scan)
	if err != nil || m == nil {
		return m, diags, err
	}
	// What Open reports stays with each source's skills (the catalog
	// reads it from the provider) until the source is served at its pin:
	// it is not added to the catalog for good.
	m.Open(ctx, true)
	return m, diags, nil
}

// start hands the manager to the service and starts its scheduled syncs,
// stopping the ones of the manager before.
func (rs *remoteState) start(life context.Context, svc *service.Service, m *remote.Manager, f *config.File, logger *slog.Logger) {
	if rs.cancel != nil {
		rs.cancel()
		rs.cancel = nil
	}
	rs.mu.Lock()
	old := rs.m
	rs.m, rs.cfg = m, f
	rs.mu.Unlock()
	if old != nil && old != m {
		old.Close() // its snapshots are no longer served by this process
	}
	if m == nil {
		svc.SetRemotes(nil)
		return
	}
	every := everyOf(f)
	refresh := func(ctx context.Context, why string) { svc.Refresh(ctx, nil, why) }
	svc.SetRemotes(remotesService{m: m, every: every, refresh: refresh, policy: policyOf(f)})
	ctx, cancel := context.WithCancel(life)
	rs.cancel = cancel
	scheduleSyncs(ctx, svc, every, logger)
	if !rs.noWatch {
		rs.watchLock(ctx, svc, logger)
	}
}

// policyOf is the config's safety policy (nil: the default).
func policyOf(f *config.File) *safety.Policy {
	return f.SafetyPolicy()
}

// safetyRefusals checks skills with the safety checks and returns the
// findings policy p refuses (a remote snapshot with any is not swapped in).
func safetyRefusals(p *safety.Policy) func([]*skill.Skill) []skill.Diagnostic {
	return func(sks []*skill.Skill) []skill.Diagnostic {
		var out []skill.Diagnostic
		for _, sk := range sks {
			in, err := safety.FromSkill(sk, p)
			if err != nil {
				continue // the catalog reports what cannot be read
			}
			for _, d := range safety.Check(in, p) {
				if p.Refuses(d) {
					d.Skill = sk.Name
					out = append(out, d)
				}
			}
		}
		return out
	}
}
