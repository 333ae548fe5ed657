// Package obs is the seam between loadout's library code and its
// observers (the metrics and tracing packages): library code marks where an
// operation starts and ends, and whatever observers the binary registered
// at start-up see it. The library imports no metrics or tracing library,
// and with no observer registered a mark costs one atomic load and no
// allocation.
//
// Names and kinds are constants of the code, never data from a request or
// a skill, so an observer may use them as metric labels: their number is
// bounded by the code.
package obs

import (
	"context"
	"sync"
	"sync/atomic"
)

// Kind is what sort of operation a mark is.
type Kind uint8

// The kinds of operation.
const (
	KindHTTP       Kind = iota + 1 // one HTTP request (the name is "METHOD ROUTE": httpapi.Trace)
	KindMCP                        // one MCP call (the name is the method or "tools/call NAME")
	KindStore                      // one store query or transaction (the name is the store method)
	KindRefresh                    // one catalog refresh ("catalog"), or one source read in it (the source kind: "folder", "store", "plugin", "remote")
	KindSync                       // one remote-source sync (the name is the source kind: "git", "index", "oci")
	KindSafetyScan                 // one safety check of the catalog's new skills ("catalog")
)

var kindNames = [...]string{"", "http", "mcp", "store", "refresh", "sync", "safety_scan"}

// String is the kind's name as observers label it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Attr is one attribute of an operation, for traces. Values may be data
// (a skill name, an agent id): observers must not use them as metric labels.
type Attr struct {
	Key   string
	Value string
}

// Observer sees operations start and end.
type Observer interface {
	// Start is called when an operation begins. It returns the context the
	// operation continues in (a tracer puts its span there) and the
	// function called once when the operation ends, with its error.
	Start(ctx context.Context, kind Kind, name string, attrs []Attr) (context.Context, func(error))
}

type holder struct{ o Observer }

var current atomic.Pointer[holder]

// registered is what Add and Set registered, in order; current is their
// Multi.
var registered struct {
	sync.Mutex
	list []*Observer
}

// Set registers o as the only observer (nil removes every observer). It
// is meant for start-up, before requests are served, and for tests.
func Set(o Observer) {
	registered.Lock()
	defer registered.Unlock()
	registered.list = nil
	if o != nil {
		registered.list = []*Observer{&o}
	}
	publish()
}

// Add registers o beside the observers already registered (the binary's
// metrics and its tracer each add theirs) and returns what removes it
// again.
func Add(o Observer) (remove func()) {
	if o == nil {
		return func() {}
	}
	registered.Lock()
	defer registered.Unlock()
	p := &o
	registered.list = append(registered.list, p)
	publish()
	return func() {
		registered.Lock()
		defer registered.Unlock()
		for i, q := range registered.list {
			if q == p {
				registered.list = append(registered.list[:i:i], registered.list[i+1:]...)
				break
			}
		}
		publish()
	}
}

// publish makes current the Multi of the registered observers; the caller
// holds registered's lock.
func publish() {
	if len(registered.list) == 0 {
		current.Store(nil)
		return
	}
	os := make([]Observer, len(registered.list))
	for i, p := range registered.list {
		os[i] = *p
	}
	current.Store(&holder{o: Multi(os...)})
}

// Enabled reports whether an observer is registered, for callers that
// would otherwise build attributes for nothing.
func Enabled() bool { return current.Load() != nil }

func nop(error) {}

// Start marks the start of an operation and returns its context and the
// function to call when it ends:
//
//	ctx, end := obs.Start(ctx, obs.KindStore, "GetSkill")
//	defer func() { end(err) }()
func Start(ctx context.Context, kind Kind, name string, attrs ...Attr) (context.Context, func(error)) {
	h := current.Load()
	if h == nil {
		return ctx, nop
	}
	return h.o.Start(ctx, kind, name, attrs)
}

// Multi is an observer that tells each of os, in order.
func Multi(os ...Observer) Observer {
	var keep []Observer
	for _, o := range os {
		if o != nil {
			keep = append(keep, o)
		}
	}
	if len(keep) == 1 {
		return keep[0]
	}
	return multi(keep)
}

type multi []Observer

func (m multi) Carry(ctx, from context.Context) context.Context {
	for _, o := range m {
		if c, ok := o.(Carrier); ok {
			ctx = c.Carry(ctx, from)
		}
	}
	return ctx
}

func (m multi) Start(ctx context.Context, kind Kind, name string, attrs []Attr) (context.Context, func(error)) {
	ends := make([]func(error), len(m))
	for i, o := range m {
		ctx, ends[i] = o.Start(ctx, kind, name, attrs)
	}
	return ctx, func(err error) {
		for i := len(ends) - 1; i >= 0; i-- {
			ends[i](err)
		}
	}
}

// The bounds of a remote trace context: a longer traceparent is not one
// (version 00's is 55 bytes; later versions may append, so up to 128 are
// passed on for the tracer to judge), and a longer tracestate is dropped
// (the W3C limit is 32 members; 512 bytes is what every vendor must
// propagate). Both are checked before anything is kept, so a 1 MB header
// costs a length comparison.
const (
	MaxTraceParent = 128
	MaxTraceState  = 512
)

// Remote is the trace context an operation's caller sent: W3C traceparent
// and tracestate, from an HTTP request's headers or an MCP message's
// _meta. A tracer continues it; other observers ignore it. The strings
// are the caller's, unparsed, but never longer than the bounds above.
type Remote struct {
	TraceParent, TraceState string
}

type remoteKey struct{}

// WithRemote returns ctx carrying the caller's trace context, for the next
// Start to continue. A traceparent that is empty or longer than
// MaxTraceParent leaves ctx as it is; a tracestate longer than
// MaxTraceState is dropped and the traceparent kept. Call it only when
// Enabled: with no observer nobody reads it.
func WithRemote(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" || len(traceparent) > MaxTraceParent {
		return ctx
	}
	if len(tracestate) > MaxTraceState {
		tracestate = ""
	}
	return context.WithValue(ctx, remoteKey{}, Remote{TraceParent: traceparent, TraceState: tracestate})
}

// RemoteFrom returns the trace context WithRemote put in ctx.
func RemoteFrom(ctx context.Context) (Remote, bool) {
	r, ok := ctx.Value(remoteKey{}).(Remote)
	return r, ok
}

// StatusError is what an HTTP mark ends with when its answer's status is
// 400 or more (the status; below 400 it ends with nil). A tracer marks a
// span failed for 500 and up only, as OpenTelemetry's HTTP conventions
// say for a server; a metrics observer may label by it.
type StatusError int

func (e StatusError) Error() string { return "HTTP status " + itoa(int(e)) }

func itoa(n int) string {
	if n < 0 || n > 999 {
		return "?"
	}
	return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
}

// Carrier is an observer that keeps something of its own in the context
// an operation runs in (a tracer, its current span) and can move it to
// another context. Observers that keep nothing need not implement it.
type Carrier interface {
	// Carry returns ctx with the observer's own values taken from from
	// (and none of ctx's own left, when from has none).
	Carry(ctx, from context.Context) context.Context
}

// Carry returns ctx with the observers' values (a tracer's current span)
// taken from from. An MCP message over HTTP runs in its session's context,
// made by the request that opened the session: Carry makes its operation
// a child of the request that carried it, not of that first one.
func Carry(ctx, from context.Context) context.Context {
	h := current.Load()
	if h == nil {
		return ctx
	}
	if c, ok := h.o.(Carrier); ok {
		return c.Carry(ctx, from)
	}
	return ctx
}
