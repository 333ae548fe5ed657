package obs

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type rec struct {
	tag  string
	log  *[]string
	seen []Attr
}

type ctxKey struct{}

func (r *rec) Start(ctx context.Context, kind Kind, name string, attrs []Attr) (context.Context, func(error)) {
	*r.log = append(*r.log, "start "+r.tag+" "+kind.String()+" "+name)
	r.seen = attrs
	ctx = context.WithValue(ctx, ctxKey{}, r.tag)
	return ctx, func(err error) {
		s := "end " + r.tag
		if err != nil {
			s += " " + err.Error()
		}
		*r.log = append(*r.log, s)
	}
}

func TestStartWithoutObserverIsFree(t *testing.T) {
	Set(nil)
	ctx := context.Background()
	got, end := Start(ctx, KindStore, "GetSkill")
	if got != ctx {
		t.Fatal("Start without an observer changed the context")
	}
	end(errors.New("ignored"))
	if Enabled() {
		t.Fatal("Enabled with no observer")
	}
	if n := testing.AllocsPerRun(100, func() {
		_, end := Start(ctx, KindStore, "GetSkill")
		end(nil)
	}); n != 0 {
		t.Fatalf("Start without an observer allocates %v times, want 0", n)
	}
}

func TestMultiOrder(t *testing.T) {
	var log []string
	a, b := &rec{tag: "a", log: &log}, &rec{tag: "b", log: &log}
	Set(Multi(a, nil, b))
	defer Set(nil)
	if !Enabled() {
		t.Fatal("not Enabled after Set")
	}
	ctx, end := Start(context.Background(), KindRefresh, "dir", Attr{"root", "/x"})
	if v, _ := ctx.Value(ctxKey{}).(string); v != "b" {
		t.Fatalf("context from the last observer = %q, want b", v)
	}
	end(errors.New("boom"))
	want := []string{"start a refresh dir", "start b refresh dir", "end b boom", "end a boom"}
	if len(log) != len(want) {
		t.Fatalf("log = %q, want %q", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("log = %q, want %q", log, want)
		}
	}
	if len(a.seen) != 1 || a.seen[0].Value != "/x" {
		t.Fatalf("attrs = %v", a.seen)
	}
	if Multi(a) != Observer(a) {
		t.Fatal("Multi of one observer should be that observer")
	}
}

func TestKindNames(t *testing.T) {
	for k, want := range map[Kind]string{KindHTTP: "http", KindMCP: "mcp", KindStore: "store", KindRefresh: "refresh", KindSync: "sync", KindSafetyScan: "safety_scan", 0: "", 99: "unknown"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d) = %q, want %q", k, got, want)
		}
	}
}

func TestWithRemoteBounds(t *testing.T) {
	ctx := context.Background()
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	got, ok := RemoteFrom(WithRemote(ctx, tp, "a=b"))
	if !ok || got.TraceParent != tp || got.TraceState != "a=b" {
		t.Fatalf("RemoteFrom = %+v, %v", got, ok)
	}
	if _, ok := RemoteFrom(WithRemote(ctx, "", "a=b")); ok {
		t.Fatal("an empty traceparent was kept")
	}
	at := strings.Repeat("a", MaxTraceParent)
	if got, ok := RemoteFrom(WithRemote(ctx, at, "")); !ok || got.TraceParent != at {
		t.Fatal("a traceparent at the bound was dropped")
	}
	if c := WithRemote(ctx, at+"a", "a=b"); c != ctx {
		t.Fatal("a traceparent past the bound changed the context")
	}
	st := strings.Repeat("s", MaxTraceState)
	if got, _ := RemoteFrom(WithRemote(ctx, tp, st)); got.TraceState != st {
		t.Fatal("a tracestate at the bound was dropped")
	}
	if got, _ := RemoteFrom(WithRemote(ctx, tp, st+"s")); got.TraceState != "" || got.TraceParent != tp {
		t.Fatalf("a tracestate past the bound: %+v, want it dropped and the traceparent kept", got)
	}
	if s := StatusError(503).Error(); s != "HTTP status 503" {
		t.Fatalf("StatusError(503) = %q", s)
	}
}

type carrier struct{ rec }

func (c *carrier) Carry(ctx, from context.Context) context.Context {
	return context.WithValue(ctx, ctxKey{}, from.Value(ctxKey{}))
}

func TestCarry(t *testing.T) {
	var log []string
	from := context.WithValue(context.Background(), ctxKey{}, "from")
	Set(nil)
	if got := Carry(context.Background(), from); got.Value(ctxKey{}) != nil {
		t.Fatal("Carry with no observer changed the context")
	}
	Set(Multi(&rec{tag: "a", log: &log}, &carrier{rec{tag: "b", log: &log}}))
	defer Set(nil)
	if got := Carry(context.Background(), from); got.Value(ctxKey{}) != "from" {
		t.Fatalf("Carry through Multi = %v, want from", got.Value(ctxKey{}))
	}
	Set(&rec{tag: "a", log: &log})
	if got := Carry(context.Background(), from); got.Value(ctxKey{}) != nil {
		t.Fatal("Carry with an observer that is no Carrier changed the context")
	}
}

func TestAddAndRemove(t *testing.T) {
	defer Set(nil)
	var log []string
	a, b := &rec{tag: "a", log: &log}, &rec{tag: "b", log: &log}
	Set(nil)
	removeA := Add(a)
	removeB := Add(b)
	_, end := Start(context.Background(), KindSync, "git")
	end(nil)
	if want := []string{"start a sync git", "start b sync git", "end b", "end a"}; !equal(log, want) {
		t.Fatalf("both added: %q, want %q", log, want)
	}
	log = nil
	removeA()
	removeA() // twice: no effect
	_, end = Start(context.Background(), KindSync, "git")
	end(nil)
	if want := []string{"start b sync git", "end b"}; !equal(log, want) {
		t.Fatalf("a removed: %q, want %q", log, want)
	}
	removeB()
	if Enabled() {
		t.Fatal("Enabled after every observer was removed")
	}
	if Add(nil)(); Enabled() {
		t.Fatal("Add(nil) registered something")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
