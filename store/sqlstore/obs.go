package sqlstore

import (
	"context"
	"runtime"
	"strings"
	"sync"

	"github.com/loadout/loadout/internal/obs"
)

// Every transaction (read, writeTx) and every statement run outside one
// (Get, ReadFile) is one obs.KindStore operation, for the observers the
// binary registered (traces, metrics). Its name is the store method that
// ran it ("Get", "Put", "Skills", "Receipts.Flush"…), found from the call
// stack once per call site and kept: a constant of the code, never the
// SQL (which holds no data here anyway, all of it being parameters) nor
// its arguments. The change feeds' polls (changes.go) are not marked: they
// run every second whatever anyone asks, and are no one's request.

// startOp starts the operation of a transaction begun by the caller of
// the caller of startOp (a Store method calling read or write).
func startOp(ctx context.Context) (context.Context, func(error)) {
	if !obs.Enabled() {
		return ctx, nopEnd
	}
	var pcs opStack
	runtime.Callers(3, pcs[:])
	return obs.Start(ctx, obs.KindStore, opName(pcs))
}

// startNamed starts an operation with a name of the code.
func startNamed(ctx context.Context, name string) (context.Context, func(error)) {
	if !obs.Enabled() {
		return ctx, nopEnd
	}
	return obs.Start(ctx, obs.KindStore, name)
}

func nopEnd(error) {}

// opStack is the call stack above a transaction's start: deep enough to
// pass the package's helpers (write → writeTx, a closure) to the method.
type opStack [6]uintptr

var opNames sync.Map // opStack → string

const pkgPrefix = "github.com/loadout/loadout/store/sqlstore."

// opName is the name of the first exported method of this package on the
// stack, without the type when it is Store's; "store" when there is none.
func opName(pcs opStack) string {
	if v, ok := opNames.Load(pcs); ok {
		return v.(string)
	}
	name := "store"
	frames := runtime.CallersFrames(pcs[:])
	for {
		f, more := frames.Next()
		if n, ok := methodName(f.Function); ok {
			name = n
			break
		}
		if !more {
			break
		}
	}
	opNames.Store(pcs, name)
	return name
}

// methodName turns "…/sqlstore.(*Store).Get" into "Get" and
// "…/sqlstore.(*receipts).Flush" into "receipts.Flush"; ok is false for a
// function that is no exported method of this package (or a closure in
// one).
func methodName(fn string) (string, bool) {
	rest, ok := strings.CutPrefix(fn, pkgPrefix)
	if !ok {
		return "", false
	}
	typ, method, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(method, ".") || method == "" || method[0] < 'A' || method[0] > 'Z' {
		return "", false
	}
	typ = strings.TrimSuffix(strings.TrimPrefix(typ, "(*"), ")")
	if typ == "Store" {
		return method, true
	}
	return typ + "." + method, true
}
