// Package config reads loadout.json: the agents, their skill sources and
// the limits of discovery. JSON with comments and trailing commas is
// accepted; an unknown key is an error that names it.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/jsonc"
	"github.com/loadout/loadout/safety"
	"github.com/loadout/loadout/source"
)

// DefaultName is the config file looked for in the working folder.
const DefaultName = "loadout.json"

// File is the content of loadout.json.
type File struct {
	Schema string `json:"$schema,omitempty"`
	// Agents, in order: agentId, displayName,
	// description, skills; plus preload, tools, budget and format.
	Agents []catalog.AgentSpec `json:"agents"`
	// Budget, Format and BudgetTokens are defaults for agents that set
	// none of their own.
	Budget       int    `json:"budget,omitempty"`
	Format       string `json:"format,omitempty"`
	BudgetTokens int    `json:"budgetTokens,omitempty"`
	// Listing tunes how usage ranks the skills that keep their
	// descriptions when a listing does not fit its budget.
	Listing Listing `json:"listing,omitempty"`
	// Limits bound folder discovery.
	Limits Limits `json:"limits,omitempty"`
	// Store is where stored skills live: a file path means SQLite, a
	// postgres:// URL means PostgreSQL. Default: loadout.db next to this
	// file. --db and LOADOUT_DB override it.
	Store string `json:"store,omitempty"`
	// StoreLimits bound what may be stored.
	StoreLimits StoreLimits `json:"storeLimits,omitempty"`
	// StorePool bounds the store's connection pool (0: the engine's
	// default: SQLite 2×GOMAXPROCS+1, PostgreSQL 16; idle 5 minutes).
	StorePool StorePool `json:"storePool,omitempty"`
	// Plugins are plugin folders (each holding plugin.json), in precedence
	// order.
	Plugins []string `json:"plugins,omitempty"`
	// Watch tunes live reload of skill folders.
	Watch Watch `json:"watch,omitempty"`
	// Server configures `loadout serve`: the names it answers to and the
	// bounds on clients. Flags override it.
	Server Server `json:"server,omitempty"`
	// Receipts bound the activation receipts the store keeps.
	Receipts Receipts `json:"receipts,omitempty"`
	// Audit is how long the audit trail is kept, apart from receipts.
	Audit Audit `json:"audit,omitempty"`
	// Remote configures git and index sources: where their snapshots and
	// lock file are kept, and the bounds on a snapshot.
	Remote Remote `json:"remote,omitempty"`
	// Safety is the policy of the safety and quality checks (package
	// safety): which codes refuse a write, an import or a sync, which warn,
	// which are off, and accepted findings per skill; and the local
	// source kinds it gates too. Nil is the default (hidden text and
	// secrets refuse; the rest warn; folder and plugin skills are served
	// with their findings reported). SafetyPolicy gives the policy.
	Safety *Safety `json:"safety,omitempty"`
	// Review configures drafts and review of stored skills (docs/review.md).
	// Without it every save publishes, as it always has.
	Review Review `json:"review,omitempty"`
	// Tracing exports OpenTelemetry traces over OTLP/HTTP (docs/tracing.md).
	// Without an endpoint nothing is traced, and tracing costs nothing.
	Tracing Tracing `json:"tracing,omitempty"`
	// OIDC is sign-in to the web UI with an OpenID Connect provider
	// (docs/sign-in.md). Nil: token sign-in only.
	OIDC *OIDC `json:"oidc,omitempty"`
	// MCPAuth makes the MCP endpoints an OAuth 2.1 resource server, as the
	// MCP specification's authorization section has it (docs/mcp-auth.md).
	// Without it MCP takes loadout's own bearer tokens only.
	MCPAuth *MCPAuth `json:"mcpAuth,omitempty"`
	// Metrics configures GET /metrics and its optional listener of its
	// own (docs/metrics.md). Restart to change it.
	Metrics Metrics `json:"metrics,omitzero"`
	// Publish is the OCI registry the web UI pushes stored skills to
	// (docs/oci.md). Without a registry the UI offers no push.
	Publish Publish `json:"publish,omitzero"`

	// Path is the absolute path the file was read from.
	Path string `json:"-"`
}

// Safety is the "safety" object: the checks' policy, and Gate.
type Safety struct {
	safety.Policy
	// Gate lists the local source kinds, "folder" and "plugin", whose
	// skills the policy gates as it gates store writes and remote syncs:
	// a skill with a finding the policy refuses is not served (the
	// catalog reports it, code catalog.CodeSafetyGated). Store writes and
	// remote snapshots are always gated; folder and plugin skills are
	// only reported unless named here.
	Gate []string `json:"gate,omitempty"`
}

// Source kinds Safety.Gate may name.
const (
	GateFolder = "folder"
	GatePlugin = "plugin"
)

// SafetyPolicy is the safety checks' policy (nil: the default).
func (f *File) SafetyPolicy() *safety.Policy {
	if f == nil || f.Safety == nil {
		return nil
	}
	return &f.Safety.Policy
}

// StorePool bounds the store's connections.
type StorePool struct {
	// MaxConns is the most connections open (and kept open while idle).
	MaxConns int `json:"maxConns,omitempty"`
	// MaxIdleTime closes a connection idle this long.
	MaxIdleTime Duration `json:"maxIdleTime,omitempty"`
}

// Remote configures remote (git, index and oci) sources.
type Remote struct {
	// Cache is the folder snapshots are kept in. Default: remote-cache
	// beside a SQLite store file, else loadout/remote in the user's cache
	// folder.
	Cache string `json:"cache,omitempty"`
	// Lock is the lock file. Default: loadout.lock beside this file.
	Lock string `json:"lock,omitempty"`
	// MaxFiles, MaxFileSize and MaxTotalSize bound one snapshot (0: the
	// defaults, 20,000 files, 10 MiB and 512 MiB).
	MaxFiles     int   `json:"maxFiles,omitempty"`
	MaxFileSize  int64 `json:"maxFileSize,omitempty"`
	MaxTotalSize int64 `json:"maxTotalSize,omitempty"`
	// OCI bounds the requests of oci sources.
	OCI OCILimits `json:"oci,omitempty"`
}

// OCILimits bound the requests of oci sources (0: the default).
type OCILimits struct {
	// ResponseTimeout is how long a registry may take to answer a request
	// with its headers (default 30s): a registry that hangs fails then.
	ResponseTimeout Duration `json:"responseTimeout,omitempty"`
	// FetchTimeout bounds a whole resolve or fetch of one source (default
	// 5m): a registry that dribbles its bytes fails then.
	FetchTimeout Duration `json:"fetchTimeout,omitempty"`
	// MaxTags is the most tags a "tags" range is matched against (default
	// 10,000): a repository listing more fails the sync.
	MaxTags int `json:"maxTags,omitempty"`
}

// Remotes are the remote sources the agents name, once each by id, in
// order of first appearance.
func (f *File) Remotes() []catalog.SourceSpec {
	var out []catalog.SourceSpec
	seen := map[string]bool{}
	for _, a := range f.Agents {
		for _, s := range a.Skills {
			if s.Remote() && !seen[s.RemoteID()] {
				seen[s.RemoteID()] = true
				out = append(out, s)
			}
		}
	}
	return out
}

// LockPath is the lock file's path: Remote.Lock, else loadout.lock beside
// the config file.
func (f *File) LockPath() string {
	if f.Remote.Lock != "" {
		return f.Remote.Lock
	}
	return filepath.Join(filepath.Dir(f.Path), "loadout.lock")
}

// Limits bound folder discovery; zero means the default.
type Limits struct {
	MaxDepth int `json:"maxDepth,omitempty"`
	MaxDirs  int `json:"maxDirs,omitempty"`
	MaxFiles int `json:"maxFiles,omitempty"`
	// MaxFileSize is the largest file of a folder skill read or served
	// whole (default source.DefaultMaxFileSize, 16 MiB); larger files are
	// served only in ranges (read_skill_file offset/length).
	MaxFileSize int64 `json:"maxFileSize,omitempty"`
}

// Watch tunes live reload of skill folders; zero means the default.
type Watch struct {
	// MaxWatches bounds the folders watched through the system's change
	// notifications (default: half of what is free of
	// fs.inotify.max_user_watches on Linux, the allowance less the
	// watches this user's processes hold; 1024 elsewhere); folders
	// beyond it are polled.
	MaxWatches int `json:"maxWatches,omitempty"`
	// PollInterval is how often polled folders are checked, as a Go
	// duration such as "5s" (default 5s).
	PollInterval string `json:"pollInterval,omitempty"`
}

// Interval returns PollInterval as a duration (0 when unset or invalid;
// Validate reports the invalid ones).
func (w Watch) Interval() time.Duration {
	d, _ := time.ParseDuration(w.PollInterval)
	return d
}

// StoreLimits bound what the store accepts; zero means the default.
type StoreLimits struct {
	MaxFileSize  int64 `json:"maxFileSize,omitempty"`
	MaxTotalSize int64 `json:"maxTotalSize,omitempty"`
	MaxFiles     int   `json:"maxFiles,omitempty"`
	WarnTextSize int64 `json:"warnTextSize,omitempty"`
}

// Server configures the HTTP server of `loadout serve`; zero or absent
// means the default (given in the README and `loadout serve --help`).
type Server struct {
	// AllowedHosts are further Host header values the server answers to,
	// beside loopback names and the --addr host: a proxy's public name, or
	// this machine's DNS name. "name" allows any port, "name:port" one.
	AllowedHosts []string `json:"allowedHosts,omitempty"`
	// AllowedOrigins are browser origins ("https://ui.example.com") whose
	// pages may send state-changing requests (POST, PUT, DELETE).
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	// MaxConns bounds the open client connections; MaxConnsPerIP those
	// from one address.
	MaxConns      int `json:"maxConns,omitempty"`
	MaxConnsPerIP int `json:"maxConnsPerIP,omitempty"`
	// ReadHeaderTimeout bounds the arrival of a request's headers,
	// ReadTimeout that of its body, WriteTimeout one stalled write of a
	// response, IdleTimeout a kept-alive connection between requests.
	ReadHeaderTimeout Duration `json:"readHeaderTimeout,omitempty"`
	ReadTimeout       Duration `json:"readTimeout,omitempty"`
	WriteTimeout      Duration `json:"writeTimeout,omitempty"`
	IdleTimeout       Duration `json:"idleTimeout,omitempty"`
	// MCPSessions bounds the open MCP sessions (streamable HTTP, every
	// endpoint together); MCPSessionIdle closes a session without a
	// request for that long.
	MCPSessions    int      `json:"mcpSessions,omitempty"`
	MCPSessionIdle Duration `json:"mcpSessionIdle,omitempty"`
	// MCPSessionsPerToken bounds one token's MCP sessions (past it its
	// own idle-longest session is replaced); UISessionsPerToken one
	// token's UI sessions. No token's sessions end for another's.
	MCPSessionsPerToken int `json:"mcpSessionsPerToken,omitempty"`
	UISessionsPerToken  int `json:"uiSessionsPerToken,omitempty"`
	// UISessions bounds the web UI's sign-in sessions (past it a sign-in
	// replaces its token's least recently used, or is refused); UISessionIdle ends one unused that long, and
	// UISessionLifetime one that long after sign-in. Zero: the defaults
	// (service.DefaultSessionMax, …Idle, …Lifetime).
	UISessions        int      `json:"uiSessions,omitempty"`
	UISessionIdle     Duration `json:"uiSessionIdle,omitempty"`
	UISessionLifetime Duration `json:"uiSessionLifetime,omitempty"`
	// ShutdownDelay is how long serve keeps listening after SIGTERM or
	// SIGINT with GET /readyz answering 503, so that a load balancer
	// sees it is not ready and stops sending new requests before the
	// listener closes (default 0: close at once; at most
	// MaxShutdownDelay). A second signal cuts it short.
	ShutdownDelay Duration `json:"shutdownDelay,omitempty"`
	// ShutdownTimeout bounds the drain that follows: requests in flight
	// get this long to finish before their connections are closed
	// (default DefaultShutdownTimeout, at most MaxShutdownTimeout).
	ShutdownTimeout Duration `json:"shutdownTimeout,omitempty"`
}

// Shutdown bounds (server.shutdownDelay, server.shutdownTimeout).
const (
	MaxShutdownDelay       = time.Minute
	DefaultShutdownTimeout = 15 * time.Second
	MaxShutdownTimeout     = 10 * time.Minute
)

// Duration is a time.Duration written as a Go duration string ("30s",
// "5m", "1h30m").
type Duration time.Duration

// UnmarshalText reads a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration: write it like \"30s\", \"5m\" or \"1h\"", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Listing tunes the usage ranking of listings; zero means the default.
// Skills keep their descriptions (after the pinned ones) by their
// activations ("load" receipts) over the last UsageDays days (default 30).
// The counts are read when the server starts, on every reload, and every
// Refresh (default 24h) — never per request, so that the prompt of an
// unchanged catalog stays byte-identical between those times.
//
// A listing's plan (which skills are described, shortened, named or
// grouped) is kept for Replan (default 24h): skills added, edited or
// removed meanwhile are written after its text, so that the prompt keeps
// its prefix in a model's prompt cache; new usage counts take effect at
// the next plan.
type Listing struct {
	UsageDays int      `json:"usageDays,omitempty"`
	Refresh   Duration `json:"refresh,omitempty"`
	Replan    Duration `json:"replan,omitempty"`
}

// Listing defaults and bounds.
const (
	DefaultListingUsageDays = 30
	DefaultListingRefresh   = 24 * time.Hour
	DefaultListingReplan    = 24 * time.Hour
	// MinListingRefresh keeps the recompute (one usage query per
	// refresh) from running often enough to defeat prompt caching.
	MinListingRefresh = time.Minute
)

// defaultReceiptUsageDays is store.DefaultUsageDays (config does not
// import the store): how long daily counts are kept when receipts.usageDays
// is not set, so the longest usage window there is data for.
const defaultReceiptUsageDays = 400

// Days returns UsageDays or its default.
func (l Listing) Days() int {
	if l.UsageDays <= 0 {
		return DefaultListingUsageDays
	}
	return l.UsageDays
}

// Every returns Refresh or its default.
func (l Listing) Every() time.Duration {
	if l.Refresh <= 0 {
		return DefaultListingRefresh
	}
	return time.Duration(l.Refresh)
}

// ReplanEvery returns Replan or its default.
func (l Listing) ReplanEvery() time.Duration {
	if l.Replan <= 0 {
		return DefaultListingReplan
	}
	return time.Duration(l.Replan)
}

// Receipts bound the activation receipts kept; zero means the default.
// Raw receipts are kept for KeepDays (default 7), at most MaxRows (default
// 1,000,000) and at most MaxBytes (default 256 MiB, as
// store.ReceiptBytes estimates them), whichever is reached first; their
// counts per day, agent and skill are kept for UsageDays (default 400).
type Receipts struct {
	KeepDays  int   `json:"keepDays,omitempty"`
	MaxRows   int64 `json:"maxRows,omitempty"`
	MaxBytes  int64 `json:"maxBytes,omitempty"`
	UsageDays int   `json:"usageDays,omitempty"`
}

// Audit bounds the audit trail: records older than KeepDays days are
// pruned (the chain still verifies: see docs/audit.md); 0 or absent keeps
// every record forever.
type Audit struct {
	KeepDays int `json:"keepDays,omitempty"`
}

// DefaultStoreName is the SQLite file used when no store is configured.
const DefaultStoreName = "loadout.db"

// StoreDSN returns the store to open: a postgres:// URL as given, or an
// absolute SQLite path (relative paths resolve against the config's folder;
// empty means loadout.db beside the config).
func (f *File) StoreDSN() string {
	return ResolveStore(filepath.Dir(f.Path), f.Store)
}

// ResolveStore resolves a store setting against dir: URLs stay as they
// are, "" is dir/loadout.db, and a relative file path joins dir.
func ResolveStore(dir, dsn string) string {
	if IsPostgres(dsn) {
		return dsn
	}
	if dsn == "" {
		dsn = DefaultStoreName
	}
	return Resolve(dir, dsn)
}

// IsPostgres reports whether a store setting names PostgreSQL.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Error is a config problem, naming the file, and the field when there is one.
type Error struct {
	File  string
	Field string
	Line  int
	Col   int
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Load reads and checks a config file. Relative roots and preload paths
// resolve against the file's folder; a leading ~ is the home folder.
func Load(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &Error{File: path, Msg: err.Error()}
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &Error{File: abs, Msg: "no such config file: create it, or pass --root DIR to use a skills folder without one"}
		}
		return nil, &Error{File: abs, Msg: err.Error()}
	}
	return Parse(data, abs)
}

// Parse checks config text read from path (used to name the file in errors
// and to resolve relative paths).
func Parse(data []byte, path string) (*File, error) {
	var f File
	if err := jsonc.Decode(data, &f); err != nil {
		var je *jsonc.Error
		if errors.As(err, &je) {
			return nil, &Error{File: path, Field: je.Path, Line: je.Line, Col: je.Col, Msg: je.Msg}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	f.Path = path
	dir := filepath.Dir(path)
	for i, p := range f.Plugins {
		f.Plugins[i] = Resolve(dir, p)
	}
	for i := range f.Agents {
		a := &f.Agents[i]
		for j := range a.Skills {
			a.Skills[j].Root = Resolve(dir, a.Skills[j].Root)
			// A git source given as a plain path is a repository on disk.
			if g := a.Skills[j].Git; g != "" && !strings.Contains(g, "://") {
				a.Skills[j].Git = Resolve(dir, g)
			}
			if v := a.Skills[j].Verify; v != nil {
				c := *v // agents may share one
				for _, p := range []*string{&c.SSHAllowedSigners, &c.OpenPGPKeys, &c.Key, &c.TrustedRoot} {
					*p = Resolve(dir, *p)
				}
				a.Skills[j].Verify = &c
			}
		}
	}
	if f.Remote.Cache != "" {
		f.Remote.Cache = Resolve(dir, f.Remote.Cache)
	}
	if f.Remote.Lock != "" {
		f.Remote.Lock = Resolve(dir, f.Remote.Lock)
	}
	for i := range f.Agents {
		a := &f.Agents[i]
		for j, p := range a.Preload {
			if strings.ContainsRune(p, '/') || strings.HasPrefix(p, "~") || strings.HasPrefix(p, ".") {
				a.Preload[j] = Resolve(dir, p)
			}
		}
	}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return &f, nil
}

// Resolve makes p absolute: ~ is the home folder, and a relative path is
// relative to dir.
func Resolve(dir, p string) string {
	if p == "" {
		return p
	}
	p = source.ExpandHome(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// Validate checks what decoding cannot: required fields, unique ids,
// patterns, formats.
func (f *File) Validate() error {
	seen := map[string]int{}
	for i := range f.Agents {
		a := &f.Agents[i]
		if err := a.Validate(); err != nil {
			var se *catalog.SpecError
			if errors.As(err, &se) {
				return &Error{File: f.Path, Field: fmt.Sprintf("agents[%d].%s", i, se.Field), Msg: se.Msg}
			}
			return &Error{File: f.Path, Field: fmt.Sprintf("agents[%d]", i), Msg: err.Error()}
		}
		if j, dup := seen[a.AgentID]; dup {
			return &Error{File: f.Path, Field: fmt.Sprintf("agents[%d].agentId", i), Msg: fmt.Sprintf("%q is already the id of agents[%d]: agent ids must be unique", a.AgentID, j)}
		}
		seen[a.AgentID] = i
	}
	// One id, one remote source: two entries with the same id must agree.
	remotes := map[string]string{}
	for i, a := range f.Agents {
		for j, s := range a.Skills {
			if !s.Remote() {
				continue
			}
			k := fmt.Sprintf("%s|%s|%s|%q|%s|%s|%q|%s|%s|%s|%s|%t|%s|%s", s.Git, s.Index, s.Ref, s.Paths, s.Every, s.Token, s.AllowedOrigins, s.OCI, s.Tag, s.Digest, s.Tags, s.Insecure, s.Username, s.Password)
			if s.Verify != nil {
				k += fmt.Sprintf("|%+v", *s.Verify)
			}
			field := fmt.Sprintf("agents[%d].skills[%d]", i, j)
			if prev, ok := remotes[s.RemoteID()]; ok && prev != k {
				return &Error{File: f.Path, Field: field, Msg: fmt.Sprintf("remote source id %q is used for two different sources: give one of them its own \"id\" (or make all their fields the same)", s.RemoteID())}
			}
			remotes[s.RemoteID()] = k
		}
	}
	if f.Safety != nil {
		if err := f.Safety.Policy.Validate(); err != nil {
			return &Error{File: f.Path, Field: "safety", Msg: strings.TrimPrefix(err.Error(), "safety policy: ")}
		}
		for i, k := range f.Safety.Gate {
			switch k {
			case GateFolder, GatePlugin:
			case "store", "git", "index", "oci":
				return &Error{File: f.Path, Field: fmt.Sprintf("safety.gate[%d]", i), Msg: fmt.Sprintf("%q: store writes and remote syncs are always gated; name only %q or %q here", k, GateFolder, GatePlugin)}
			default:
				return &Error{File: f.Path, Field: fmt.Sprintf("safety.gate[%d]", i), Msg: fmt.Sprintf("%q is not a source kind the policy can gate: use %q or %q", k, GateFolder, GatePlugin)}
			}
		}
	}
	if f.StorePool.MaxConns < 0 || f.StorePool.MaxIdleTime < 0 {
		return &Error{File: f.Path, Field: "storePool", Msg: "maxConns and maxIdleTime must be positive (0 or absent for the defaults)"}
	}
	if f.Remote.MaxFiles < 0 || f.Remote.MaxFileSize < 0 || f.Remote.MaxTotalSize < 0 {
		return &Error{File: f.Path, Field: "remote", Msg: "limits must be positive numbers (0 or absent for the defaults)"}
	}
	if o := f.Remote.OCI; o.ResponseTimeout < 0 || o.FetchTimeout < 0 || o.MaxTags < 0 {
		return &Error{File: f.Path, Field: "remote.oci", Msg: "responseTimeout, fetchTimeout and maxTags must be positive (0 or absent for the defaults: 30s, 5m and 10000)"}
	}
	switch f.Format {
	case "", "pi", "catalog", "progressive":
	default:
		return &Error{File: f.Path, Field: "format", Msg: fmt.Sprintf("%q is not a prompt format: use pi, catalog or progressive", f.Format)}
	}
	if f.StoreLimits.MaxFileSize < 0 || f.StoreLimits.MaxTotalSize < 0 || f.StoreLimits.MaxFiles < 0 || f.StoreLimits.WarnTextSize < 0 {
		return &Error{File: f.Path, Field: "storeLimits", Msg: "limits must be positive numbers (0 or absent for the defaults)"}
	}
	for field, v := range map[string]int64{"keepDays": int64(f.Receipts.KeepDays), "maxRows": f.Receipts.MaxRows, "maxBytes": f.Receipts.MaxBytes, "usageDays": int64(f.Receipts.UsageDays)} {
		if v < 0 {
			return &Error{File: f.Path, Field: "receipts." + field, Msg: fmt.Sprintf("%d is negative: give a positive number (0 or absent for the default)", v)}
		}
	}
	if f.Audit.KeepDays < 0 {
		return &Error{File: f.Path, Field: "audit.keepDays", Msg: fmt.Sprintf("%d is negative: give a number of days to keep audit records, or 0 (or leave it out) to keep them forever", f.Audit.KeepDays)}
	}
	if f.BudgetTokens < 0 || f.BudgetTokens > catalog.MaxBudgetTokens {
		return &Error{File: f.Path, Field: "budgetTokens", Msg: fmt.Sprintf("%d: give a number of tokens between 1 and %d, or 0 (or leave it out) for no token budget", f.BudgetTokens, catalog.MaxBudgetTokens)}
	}
	keptDays := f.Receipts.UsageDays
	if keptDays == 0 {
		keptDays = defaultReceiptUsageDays
	}
	if d := f.Listing.UsageDays; d < 0 || d > keptDays {
		return &Error{File: f.Path, Field: "listing.usageDays", Msg: fmt.Sprintf("%d: give a number of days between 1 and %d (receipts.usageDays, how long daily counts are kept), or 0 (or leave it out) for the default, %d", d, keptDays, DefaultListingUsageDays)}
	}
	if r := time.Duration(f.Listing.Refresh); r < 0 || r > 0 && r < MinListingRefresh {
		return &Error{File: f.Path, Field: "listing.refresh", Msg: fmt.Sprintf("%s: give a duration of at least %s, like \"24h\", or leave it out for the default, %s", r, MinListingRefresh, DefaultListingRefresh)}
	}
	if r := time.Duration(f.Listing.Replan); r < 0 || r > 0 && r < MinListingRefresh {
		return &Error{File: f.Path, Field: "listing.replan", Msg: fmt.Sprintf("%s: give a duration of at least %s, like \"24h\", or leave it out for the default, %s", r, MinListingRefresh, DefaultListingReplan)}
	}
	for i, p := range f.Plugins {
		if strings.TrimSpace(p) == "" {
			return &Error{File: f.Path, Field: fmt.Sprintf("plugins[%d]", i), Msg: "is empty: give the folder holding plugin.json"}
		}
	}
	if f.Watch.MaxWatches < 0 {
		return &Error{File: f.Path, Field: "watch.maxWatches", Msg: "must be a positive number of folders (0 or absent for the default, half of what is free of the system's inotify allowance)"}
	}
	if p := f.Watch.PollInterval; p != "" {
		if d, err := time.ParseDuration(p); err != nil || d < 100*time.Millisecond {
			return &Error{File: f.Path, Field: "watch.pollInterval", Msg: fmt.Sprintf("%q: give a duration of at least 100ms, like \"5s\"", p)}
		}
	}
	if f.Limits.MaxDepth < 0 || f.Limits.MaxDirs < 0 || f.Limits.MaxFiles < 0 || f.Limits.MaxFileSize < 0 {
		return &Error{File: f.Path, Field: "limits", Msg: "limits must be positive numbers (0 or absent for the defaults)"}
	}
	if err := f.Metrics.validate(f.Path); err != nil {
		return err
	}
	if err := f.Publish.validate(f.Path); err != nil {
		return err
	}
	if err := f.Tracing.validate(f.Path); err != nil {
		return err
	}
	if f.OIDC != nil {
		agents := map[string]bool{}
		for _, a := range f.Agents {
			agents[a.AgentID] = true
		}
		if err := f.OIDC.validate(f.Path, agents); err != nil {
			return err
		}
	}
	if err := f.Server.validate(f.Path); err != nil {
		return err
	}
	if f.MCPAuth != nil {
		return f.MCPAuth.validate(f.Path, seen)
	}
	return nil
}

// Metrics is the "metrics" object (docs/metrics.md).
type Metrics struct {
	// Addr, when set, is a listen address (HOST:PORT, like
	// "127.0.0.1:9464") of its own that serves GET /metrics alone, to
	// anyone who reaches it, without a token: for a Prometheus in the
	// same pod or host. It must be a loopback address unless
	// AllowNonLoopback is set.
	Addr string `json:"addr,omitempty"`
	// AllowNonLoopback lets Addr be any address (0.0.0.0:9464 inside a
	// cluster, behind a network policy): whoever reaches it reads the
	// metrics.
	AllowNonLoopback bool `json:"allowNonLoopback,omitempty"`
	// SkillLabels adds the loads and reads of each skill by name
	// (loadout_skill_uses_total), for at most MaxSkillSeries names.
	SkillLabels bool `json:"skillLabels,omitempty"`
	// MaxSkillSeries caps the skill names that get their own label value
	// (default DefaultMetricsSkillSeries, at most MaxMetricsSkillSeries);
	// the rest are counted under "_other".
	MaxSkillSeries int `json:"maxSkillSeries,omitempty"`
}

// Bounds of metrics.maxSkillSeries (the metrics package's own, which
// its tests check against these).
const (
	DefaultMetricsSkillSeries = 500
	MaxMetricsSkillSeries     = 10_000
)

func (m *Metrics) validate(file string) error {
	if m.MaxSkillSeries < 0 || m.MaxSkillSeries > MaxMetricsSkillSeries {
		return &Error{File: file, Field: "metrics.maxSkillSeries", Msg: fmt.Sprintf("%d: give 1 to %d skill names, or 0 (or leave it out) for the default, %d", m.MaxSkillSeries, MaxMetricsSkillSeries, DefaultMetricsSkillSeries)}
	}
	if m.MaxSkillSeries > 0 && !m.SkillLabels {
		return &Error{File: file, Field: "metrics.maxSkillSeries", Msg: "is set but metrics.skillLabels is not: set \"skillLabels\": true to label loads and reads by skill, or remove maxSkillSeries"}
	}
	if m.Addr == "" {
		if m.AllowNonLoopback {
			return &Error{File: file, Field: "metrics.allowNonLoopback", Msg: "is set but metrics.addr is not: give the address (\"0.0.0.0:9464\") or remove allowNonLoopback"}
		}
		return nil
	}
	host, port, err := net.SplitHostPort(m.Addr)
	if err != nil || port == "" {
		return &Error{File: file, Field: "metrics.addr", Msg: fmt.Sprintf("%q is not HOST:PORT: write it like \"127.0.0.1:9464\"", m.Addr)}
	}
	if !m.AllowNonLoopback && !LoopbackHost(host) {
		return &Error{File: file, Field: "metrics.addr", Msg: fmt.Sprintf("%q is not a loopback address: the metrics listener answers without a token, so anyone who reaches it reads the metrics. Use 127.0.0.1:%s, or set \"allowNonLoopback\": true if only your Prometheus can reach it (a pod's network policy)", m.Addr, port)}
	}
	return nil
}

// LoopbackHost reports whether host (of HOST:PORT) names only this
// machine: localhost or a loopback IP. "" (every interface) does not.
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) validate(file string) error {
	for i, h := range s.AllowedHosts {
		if err := CheckHost(h); err != nil {
			return &Error{File: file, Field: fmt.Sprintf("server.allowedHosts[%d]", i), Msg: err.Error()}
		}
	}
	for i, o := range s.AllowedOrigins {
		if !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") || strings.Count(o, "/") != 2 {
			return &Error{File: file, Field: fmt.Sprintf("server.allowedOrigins[%d]", i), Msg: fmt.Sprintf("%q is not an origin: write scheme://host[:port], like \"https://ui.example.com\", with no path", o)}
		}
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"maxConns", int64(s.MaxConns)}, {"maxConnsPerIP", int64(s.MaxConnsPerIP)}, {"mcpSessions", int64(s.MCPSessions)},
		{"readHeaderTimeout", int64(s.ReadHeaderTimeout)}, {"readTimeout", int64(s.ReadTimeout)},
		{"writeTimeout", int64(s.WriteTimeout)}, {"idleTimeout", int64(s.IdleTimeout)}, {"mcpSessionIdle", int64(s.MCPSessionIdle)},
		{"uiSessions", int64(s.UISessions)}, {"mcpSessionsPerToken", int64(s.MCPSessionsPerToken)}, {"uiSessionsPerToken", int64(s.UISessionsPerToken)}, {"uiSessionIdle", int64(s.UISessionIdle)}, {"uiSessionLifetime", int64(s.UISessionLifetime)},
	} {
		if n.v < 0 {
			return &Error{File: file, Field: "server." + n.name, Msg: "must be positive (0 or absent for the default)"}
		}
	}
	for _, n := range []struct {
		name     string
		v, limit time.Duration
	}{
		{"shutdownDelay", time.Duration(s.ShutdownDelay), MaxShutdownDelay},
		{"shutdownTimeout", time.Duration(s.ShutdownTimeout), MaxShutdownTimeout},
	} {
		if n.v < 0 || n.v > n.limit {
			return &Error{File: file, Field: "server." + n.name, Msg: fmt.Sprintf("%s: give a duration from 0 to %s, like \"5s\" (0 or absent for the default)", n.v, n.limit)}
		}
	}
	return nil
}

// CheckHost checks an allowed Host value: a host name or IP address,
// optionally with a port, and nothing else (no scheme, path or spaces).
func CheckHost(h string) error {
	if h == "" {
		return errors.New("is empty: give a host name, like skills.example.com, or host:port")
	}
	if strings.Contains(h, "://") {
		return fmt.Errorf("%q has a scheme: give the host alone, like %q", h, h[strings.Index(h, "://")+3:])
	}
	for _, r := range h {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("/?#@,;\\\"'", r) {
			return fmt.Errorf("%q is not a host name: give a name or address, optionally with :port, like skills.example.com or 10.0.0.5:7777", h)
		}
	}
	return nil
}

// CatalogOptions turns the file's defaults and limits into catalog options.
func (f *File) CatalogOptions() catalog.Options {
	var gate *catalog.Gate
	if f.Safety != nil && len(f.Safety.Gate) > 0 {
		gate = &catalog.Gate{Policy: f.SafetyPolicy(), Kinds: f.Safety.Gate}
	}
	return catalog.Options{
		Gate:         gate,
		Budget:       f.Budget,
		Format:       f.Format,
		BudgetTokens: f.BudgetTokens,
		Scan: source.Options{
			MaxDepth:    f.Limits.MaxDepth,
			MaxDirs:     f.Limits.MaxDirs,
			MaxFiles:    f.Limits.MaxFiles,
			MaxFileSize: f.Limits.MaxFileSize,
		},
	}
}

// Tracing is the "tracing" object: where `loadout serve` sends its
// traces (docs/tracing.md).
type Tracing struct {
	// Endpoint is the OTLP/HTTP endpoint of a collector, like
	// "http://otel-collector:4318" (the path /v1/traces is added when it
	// has none). Empty: no tracing, at no cost.
	Endpoint string `json:"endpoint,omitempty"`
	// Headers are sent with every export (an API key of a tracing
	// service, say). Values may name environment variables as ${NAME}.
	Headers map[string]string `json:"headers,omitempty"`
	// SampleRatio is the share of new traces kept, from 0 to 1; a
	// request that carries a trace context follows its caller's decision.
	// Absent: 1 (every trace).
	SampleRatio *float64 `json:"sampleRatio,omitempty"`
	// ServiceName is the service.name of the traces. Default "loadout".
	ServiceName string `json:"serviceName,omitempty"`
	// Timeout bounds one export, retries included. Default 10s.
	Timeout Duration `json:"timeout,omitempty"`
}

// The bounds of the tracing object.
const (
	DefaultTracingTimeout = 10 * time.Second
	MaxTracingTimeout     = time.Minute
	maxTracingHeaders     = 32
	maxTracingHeaderBytes = 4096
	maxServiceName        = 128
)

func (t *Tracing) validate(file string) error {
	if t.Endpoint == "" {
		if len(t.Headers) > 0 || t.SampleRatio != nil || t.ServiceName != "" || t.Timeout != 0 {
			return &Error{File: file, Field: "tracing.endpoint", Msg: "is empty, but other tracing keys are set: give the OTLP/HTTP endpoint of a collector, like \"http://otel-collector:4318\", or remove the tracing object"}
		}
		return nil
	}
	u, err := url.Parse(t.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return &Error{File: file, Field: "tracing.endpoint", Msg: fmt.Sprintf("%q is not an OTLP/HTTP endpoint: give an http:// or https:// URL with a host and no credentials or query, like \"http://otel-collector:4318\" (credentials go in tracing.headers)", t.Endpoint)}
	}
	if len(t.Headers) > maxTracingHeaders {
		return &Error{File: file, Field: "tracing.headers", Msg: fmt.Sprintf("has %d headers: at most %d", len(t.Headers), maxTracingHeaders)}
	}
	for k, v := range t.Headers {
		if !headerName(k) {
			return &Error{File: file, Field: "tracing.headers", Msg: fmt.Sprintf("%q is not a header name: use letters, digits and !#$%%&'*+-.^_`|~", k)}
		}
		if len(v) > maxTracingHeaderBytes || strings.ContainsAny(v, "\r\n\x00") {
			return &Error{File: file, Field: "tracing.headers." + k, Msg: fmt.Sprintf("the value must be one line of at most %d bytes", maxTracingHeaderBytes)}
		}
	}
	if r := t.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) {
		return &Error{File: file, Field: "tracing.sampleRatio", Msg: fmt.Sprintf("%v: give the share of traces to keep, from 0 (none) to 1 (all)", *r)}
	}
	if n := t.ServiceName; len(n) > maxServiceName || strings.ContainsAny(n, "\r\n\x00") {
		return &Error{File: file, Field: "tracing.serviceName", Msg: fmt.Sprintf("must be one line of at most %d bytes", maxServiceName)}
	}
	if d := time.Duration(t.Timeout); d < 0 || d > MaxTracingTimeout || d > 0 && d < 100*time.Millisecond {
		return &Error{File: file, Field: "tracing.timeout", Msg: fmt.Sprintf("%s: give a duration from 100ms to %s, like \"5s\", or leave it out for the default, %s", d, MaxTracingTimeout, DefaultTracingTimeout)}
	}
	return nil
}

// headerName reports whether k is an HTTP header name (RFC 9110 token).
func headerName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// Review is the "review" object.
type Review struct {
	// Required makes every save a draft that a reviewer approves before
	// agents are served it. Default false: every save publishes.
	Required bool `json:"required,omitempty"`
	// Distinct refuses a draft's approval (or rejection) by its own
	// author, told apart by token id. Default true.
	Distinct *bool `json:"distinct,omitempty"`
}
