package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/catalog"
	"github.com/loadout/loadout/internal/obs"
	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/service"
)

// Options configure a server for one agent view.
type Options struct {
	// Agent is the agent id, or catalog.GlobalID ("" means the same).
	Agent string
	// Stateless makes HTTPHandler keep no sessions, for several instances
	// behind a load balancer. Notifications then reach a client only
	// within a request.
	Stateless bool
	Logger    *slog.Logger
	// EnumLimit is the most skill names the tools' name argument lists as
	// an enum; beyond it the argument is a plain string (default 200).
	EnumLimit int
	// PageSize is the number of skills a skills/list page covers (default
	// 100). resources/list and resources/directory/read pages hold ten times
	// as many entries.
	PageSize int
	// Sessions bounds HTTPHandler's sessions (see Sessions); handlers
	// sharing one share its bound. Nil gives the handler a bound of its
	// own with the defaults. Stateless handlers keep no sessions.
	Sessions *Sessions
	// HostChecked says the caller checks the Host header of every request
	// (httpapi.Guard does), so HTTPHandler turns off the SDK's own check.
	// That check refuses any Host but localhost on a loopback connection,
	// which would refuse the names the operator allowed (a proxy's).
	HostChecked bool
	// Start, when set, holds back the first render of the instructions
	// (for the start-up log of what the budget leaves out: a second of
	// CPU at 50,000 skills) until it is closed, so that it does not
	// delay a server's start; a session that asks first renders them
	// then. Nil renders them in New.
	Start <-chan struct{}
}

// Limits of the MCP Skills extension, per skill.
const (
	MaxSkillFiles = 512      // SKILL.md included
	MaxSkillBytes = 16 << 20 // the sum of the files' sizes
)

const (
	defaultEnumLimit = 200
	defaultPageSize  = 100
	// ExtensionID is the MCP Skills extension's capability key.
	ExtensionID = "io.modelcontextprotocol/skills"
	// codeForbidden is the JSON-RPC error code for a principal that may not
	// read this agent: an implementation-defined server error, clear of
	// the codes the SDK gives meanings (-32001 to -32005, -32020 to -32022,
	// -32042).
	codeForbidden = -32030
)

// server is one agent view: an mcp.Server plus what it derives from the
// agent's current loadout.
type server struct {
	svc   *service.Service
	opt   Options
	agent string
	log   *slog.Logger
	mcp   *mcp.Server

	view atomic.Pointer[view]
	// listingNote is what the last "listing over its budget" log line said
	// (counts only), so a reload that changes nothing logs nothing.
	listingNote atomic.Pointer[string]
	// fastCalls counts the calls answered on the fast path (fast.go).
	fastCalls atomic.Int64
	// renders counts the instructions rendered (instructionsOf).
	renders atomic.Int64
	// updates counts follow's rounds of list_changed notifications.
	updates atomic.Int64
	// coalesce is follow's wait after a change (the const coalesce;
	// tests shorten or lengthen it).
	coalesce time.Duration
}

// view is what the server derives from one immutable loadout; a reload
// makes a new loadout and so a new view.
type view struct {
	l        *catalog.Loadout // nil when the agent does not exist
	usageGen uint64           // the service's usage counts it was built with
	// instructions are rendered when a session first asks for them
	// (initialize, server/discover), not when the view is made: a write
	// makes a new view, and rendering the whole listing after every write
	// was most of a write's cost, with no session to read it. A view whose
	// listing is its predecessor's shares its instructions (listing.go).
	instructions *listingText
	enum         []string // names for the tools' enum (visible skills)
	hidden       int      // skills left out of the enum
	manifests    sync.Map // *skill.Skill -> *manifest
	valid        sync.Map // *skill.Skill -> *validity
	// warned remembers skills already logged as left out of skills/list,
	// so paging through a listing does not log the same reason again.
	warned sync.Map
}

// NewServer builds the MCP server of one agent view. It follows the
// service's reloads for the life of the process; HTTPHandler and ServeStdio
// are the usual ways to run it.
func NewServer(svc *service.Service, opt Options) *mcp.Server {
	return newServer(context.Background(), svc, opt).mcp
}

func newServer(ctx context.Context, svc *service.Service, opt Options) *server {
	if opt.Agent == "" {
		opt.Agent = catalog.GlobalID
	}
	if opt.EnumLimit <= 0 {
		opt.EnumLimit = defaultEnumLimit
	}
	if opt.PageSize <= 0 {
		opt.PageSize = defaultPageSize
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	s := &server{svc: svc, opt: opt, agent: opt.Agent, log: opt.Logger.With("agent", opt.Agent), coalesce: coalesce}
	title := "loadout: skills of agent " + opt.Agent
	if opt.Agent == catalog.GlobalID {
		title = "loadout: every skill"
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "loadout", Title: title, Version: "1"}, &mcp.ServerOptions{
		Logger: opt.Logger,
		Capabilities: &mcp.ServerCapabilities{
			Logging:    &mcp.LoggingCapabilities{},
			Tools:      &mcp.ToolCapabilities{ListChanged: true},
			Resources:  &mcp.ResourceCapabilities{ListChanged: true},
			Prompts:    &mcp.PromptCapabilities{ListChanged: true},
			Extensions: map[string]any{ExtensionID: map[string]any{"directoryRead": true}},
		},
		PageSize: opt.PageSize * 10,
	})
	s.mcp.AddReceivingMiddleware(s.middleware)
	// The first instructions are rendered at start (once opt.Start is
	// closed), so that the log says what the budget leaves out; later
	// ones when a session asks.
	s.installTools(s.current())
	if opt.Start == nil {
		s.instructionsOf(s.current())
	} else {
		go func() {
			select {
			case <-opt.Start:
				s.instructionsOf(s.current())
			case <-ctx.Done():
			}
		}()
	}
	s.installTemplate()
	mustAdd(mcp.AddReceivingCustomMethod(s.mcp, "skills/list", s.listSkills))
	mustAdd(mcp.AddReceivingCustomMethod(s.mcp, "skills/get", s.getSkill))
	mustAdd(mcp.AddReceivingCustomMethod(s.mcp, "resources/directory/read", s.readDirectory))
	go s.follow(ctx)
	return s
}

func mustAdd(err error) {
	if err != nil {
		panic(err) // only if the SDK took one of these names as standard
	}
}

// follow tells the sessions what each reload changed in the agent's
// loadout: the resources (the files) whenever one of its skills changed
// (sameSkills), the tools (their name enum) and the prompts only when the
// listing did (sameListing). It
// acts once per burst of changes (coalesce), and renders nothing: the
// instructions are rendered when a session asks for them.
func (s *server) follow(ctx context.Context) {
	ch, stop := s.svc.Subscribe()
	defer stop()
	last := s.current()
	wait := time.NewTimer(0)
	<-wait.C
	for {
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
		wait.Reset(s.coalesce)
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				wait.Stop()
				return
			case <-ch: // taken in by the update to come
			case <-wait.C:
				waiting = false
			}
		}
		v := s.current()
		if v.usageGen == last.usageGen && sameSkills(last.l, v.l) {
			last = v
			continue // the changes were to other agents
		}
		listing := v.usageGen != last.usageGen || !sameListing(last.l, v.l)
		if listing {
			s.installTools(v)
			s.notifyPromptsChanged()
		}
		s.installTemplate()
		s.updates.Add(1)
		s.log.Debug("mcp: catalog changed; list_changed sent", "listing_changed", listing, "skills", len(v.enum))
		last = v
	}
}

// current returns the view of the agent's current loadout, building it
// when the catalog has been reloaded since.
func (s *server) current() *view {
	l, _ := s.svc.Catalog().Agent(s.agent)
	ugen := s.svc.UsageGeneration()
	if v := s.view.Load(); v != nil && v.l == l && v.usageGen == ugen {
		return v
	}
	prev := s.view.Load()
	v := &view{l: l, usageGen: ugen, instructions: &listingText{}}
	if prev != nil && prev.usageGen == ugen && sameListing(prev.l, l) {
		// A change that leaves the listing as it was (a supporting file,
		// a body): what the view derives from the listing is the same.
		v.instructions, v.enum, v.hidden = prev.instructions, prev.enum, prev.hidden
	} else if l != nil {
		// The enum lists what the tools serve: not hidden skills, nor,
		// when the agent refuses them, skills the extension's rules refuse
		// (checked only while the enum is short enough to be sent).
		names := l.Names()
		strict := refuseInvalid(l) && len(names) <= s.opt.EnumLimit
		for _, name := range names {
			if e, ok := l.Lookup(name); ok && !e.Skill.Hidden() && (!strict || v.validity(e.Skill).problem == "") {
				v.enum = append(v.enum, name)
			}
		}
		v.hidden = len(names) - len(v.enum)
	}
	// Several requests may build the same view at once; any of them is
	// correct, and the last one stored wins.
	s.view.Store(v)
	return v
}

// instructionsOf is v's instructions, rendered on the first call.
func (s *server) instructionsOf(v *view) string {
	t := v.instructions
	if t == nil { // a view made for one request (loadout)
		t = &listingText{}
	}
	t.once.Do(func() {
		if v.l != nil {
			s.renders.Add(1)
			t.text = s.instructions(v.l)
		}
	})
	return t.text
}

// instructions is the agent's listing in the progressive format within its
// budget, behind a short note on the tools. What the budget cut is logged.
func (s *server) instructions(l *catalog.Loadout) string {
	var b strings.Builder
	b.WriteString("This server holds the skills of ")
	if l.Spec.AgentID == catalog.GlobalID {
		b.WriteString("every configured agent")
	} else {
		fmt.Fprintf(&b, "agent %q", l.Spec.AgentID)
	}
	b.WriteString(". Call load_skill with a skill's name to activate it, read_skill_file for its other files, and search_skills to find a skill not listed below. Hosts with the MCP Skills extension can also use skills/list and the skill:// resources.\n\n")
	// The note is counted in the agent's budget: the instructions are
	// everything the model receives from the server up front.
	text, rep, _ := s.svc.Prompt(l, catalog.PromptOptions{Format: "progressive", Preface: b.String()})
	s.logListing(l, rep)
	if text == "" { // no skills: the note alone
		return b.String()
	}
	return text
}

// maxNamesLogged is how many names of skills left out of the listing the
// log line gives; `loadout prompt` lists them all.
const maxNamesLogged = 5

// logListing says in one line how the budget cut the instructions' listing:
// counts, the first few names left out, and the command that lists them
// all. Naming every skill made a 638 KB line at 50,000 skills. It logs
// again only when the counts change.
func (s *server) logListing(l *catalog.Loadout, rep render.Report) {
	if len(rep.Shortened) == 0 && len(rep.Omitted) == 0 {
		return
	}
	note := fmt.Sprintf("%d %d %d %d", rep.Budget, rep.Listed, len(rep.Shortened), len(rep.Omitted))
	if old := s.listingNote.Swap(&note); old != nil && *old == note {
		return
	}
	first := rep.Omitted[:min(len(rep.Omitted), maxNamesLogged)]
	agent := l.Spec.AgentID
	if agent == catalog.GlobalID {
		agent = "'*'"
	}
	s.log.Info("mcp instructions: the listing is over its budget; skills left out are still found by search_skills and loaded by name",
		"budget", rep.Budget, "listed", rep.Listed, "shortened", len(rep.Shortened), "omitted", len(rep.Omitted),
		"first_omitted", strings.Join(first, ","),
		"see_all", "loadout prompt --format progressive --agent "+agent+" (with the same --config or --root)")
}

// call is what the middleware learns about a request and handlers need.
type call struct {
	transport string
}

type callKey struct{}

func callFrom(ctx context.Context) call {
	c, _ := ctx.Value(callKey{}).(call)
	if c.transport == "" {
		c.transport = service.TransportMCPStdio
	}
	return c
}

// principalExtraKey carries the principal through the SDK's per-request
// token info (see HTTPHandler).
const principalExtraKey = "loadout.principal"

// middleware sets the principal and transport of every request, fills in
// the instructions of initialize and server/discover from the current
// loadout, and answers resources/list from the catalog.
func (s *server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	handle := s.handler(next)
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if !obs.Enabled() {
			return handle(ctx, method, req)
		}
		return s.marked(ctx, method, req, func(ctx context.Context) (mcp.Result, error) { return handle(ctx, method, req) })
	}
}

func (s *server) handler(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		c := call{transport: service.TransportMCPStdio}
		if ex := req.GetExtra(); ex != nil {
			if ex.Header != nil {
				c.transport = service.TransportMCPHTTP
			}
			// Over HTTP the principal is the one of the request carrying
			// this message; without the bridge it is the zero principal,
			// which may do nothing.
			var p service.Principal
			if ex.TokenInfo != nil {
				p, _ = ex.TokenInfo.Extra[principalExtraKey].(service.Principal)
			}
			if ex.Header != nil || ex.TokenInfo != nil {
				ctx = service.WithPrincipal(ctx, p)
			}
		}
		ctx = context.WithValue(ctx, callKey{}, c)
		switch method {
		case "prompts/list":
			if r, ok := req.(*mcp.ListPromptsRequest); ok {
				return s.listPrompts(ctx, r)
			}
		case "prompts/get":
			if r, ok := req.(*mcp.GetPromptRequest); ok {
				return s.getPrompt(ctx, r)
			}
		case "resources/list":
			if r, ok := req.(*mcp.ListResourcesRequest); ok {
				return s.listResources(ctx, r)
			}
		case "resources/read":
			if r, ok := req.(*mcp.ReadResourceRequest); ok && r.Params != nil {
				if err := s.refuseRead(ctx, r.Params.URI); err != nil {
					return nil, err
				}
			}
		case "initialize", "server/discover":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			switch r := res.(type) {
			case *mcp.InitializeResult:
				r.Instructions = s.instructionsOf(s.current())
				if ss, ok := req.GetSession().(*mcp.ServerSession); ok && s.opt.Sessions != nil && c.transport == service.TransportMCPHTTP {
					s.opt.Sessions.add(ss, service.PrincipalFrom(ctx).TokenID, s)
				}
			case *mcp.DiscoverResult:
				r.Instructions = s.instructionsOf(s.current())
			}
			return res, nil
		}
		return next(ctx, method, req)
	}
}

// loadout returns the agent's loadout for the caller, or a JSON-RPC error.
func (s *server) loadout(ctx context.Context) (*catalog.Loadout, *view, error) {
	p := service.PrincipalFrom(ctx)
	l, err := s.svc.Loadout(p, s.agent)
	if err != nil {
		return nil, nil, s.rpcError(err)
	}
	v := s.current()
	if v.l != l {
		// A reload landed between the two reads; use the newer loadout.
		v = &view{l: l}
	}
	return l, v, nil
}

// refusal turns a service error into the error the client sees. An
// internal error is logged here with its cause (the client gets only a
// generic message), as the HTTP API does.
func (s *server) refusal(err error) *service.Error {
	e := service.AsError(err)
	if e.Code == service.CodeInternal {
		s.log.Error("mcp request failed", "agent", s.agent, "err", e.Error())
	}
	return e
}

// rpcError maps a service refusal to a JSON-RPC error.
func (s *server) rpcError(err error) error {
	e := s.refusal(err)
	code := int64(jsonrpc.CodeInternalError)
	switch e.Code {
	case service.CodeForbidden, service.CodeUnauthorized:
		code = codeForbidden
	case service.CodeNotFound, service.CodeInvalid, service.CodeRefused, service.CodeTooLarge:
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: e.Message}
}

// warnOnce logs a skill left out of a listing to slog, once per loadout,
// and to the session's MCP log.
func (s *server) warnOnce(ctx context.Context, ss *mcp.ServerSession, v *view, name, reason string) {
	if _, dup := v.warned.LoadOrStore(name, true); !dup {
		s.log.Warn("mcp skills/list: skill left out", "skill", name, "reason", reason)
	}
	if ss != nil {
		_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "loadout",
			Data: fmt.Sprintf("skill %q left out of skills/list: %s", name, reason)})
	}
}
