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
	"sync/atomic"
)

// Kind is what sort of operation a mark is.
type Kind uint8

// The kinds of operation.
const (
	KindHTTP       Kind = iota + 1 // one HTTP request (the name is the route pattern)
	KindMCP                        // one MCP call (the name is the method or "tools/call NAME")
	KindStore                      // one store query or transaction (the name is the store method)
	KindRefresh                    // one catalog refresh (the name is the source kind)
	KindSync                       // one remote-source sync (the name is the source kind)
	KindSafetyScan                 // one safety scan of a skill
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

// Set registers o as the observer (nil removes it); use Multi for more
// than one. It is meant for start-up, before requests are served.
func Set(o Observer) {
	if o == nil {
		current.Store(nil)
		return
	}
	current.Store(&holder{o: o})
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
