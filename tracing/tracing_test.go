package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/loadout/loadout/internal/obs"
)

const (
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + parentTrace + "-" + parentSpan + "-01"
)

func memTracer(t *testing.T, ratio float64) (*Tracer, *tracetest.InMemoryExporter) {
	exp := tracetest.NewInMemoryExporter()
	tr := newTracer(Options{SampleRatio: ratio}, sdktrace.WithSyncer(exp))
	obs.Set(tr)
	t.Cleanup(func() { obs.Set(nil); tr.Shutdown(context.Background()) })
	return tr, exp
}

func byName(exp *tracetest.InMemoryExporter) map[string]tracetest.SpanStub {
	out := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		out[s.Name] = s
	}
	return out
}

func TestRemoteParentAndChildren(t *testing.T) {
	_, exp := memTracer(t, 1)
	ctx := obs.WithRemote(context.Background(), traceparent, "vendor=x")
	ctx, endHTTP := obs.Start(ctx, obs.KindHTTP, "POST /v1/reload", obs.Attr{Key: "http.route", Value: "/v1/reload"})
	// The reload runs in the server's life, carrying the request's span.
	life := obs.Carry(context.Background(), ctx)
	rctx, endRefresh := obs.Start(life, obs.KindRefresh, "catalog")
	_, endStore := obs.Start(rctx, obs.KindStore, "Skills")
	endStore(nil)
	endRefresh(nil)
	endHTTP(obs.StatusError(503))
	got := byName(exp)
	if len(got) != 3 {
		t.Fatalf("spans = %v, want 3", got)
	}
	h, r, s := got["POST /v1/reload"], got["catalog"], got["Skills"]
	if h.SpanContext.TraceID().String() != parentTrace || h.Parent.SpanID().String() != parentSpan || !h.Parent.IsRemote() {
		t.Errorf("server span: trace %s parent %s, want %s and %s", h.SpanContext.TraceID(), h.Parent.SpanID(), parentTrace, parentSpan)
	}
	if h.SpanKind != trace.SpanKindServer || h.Status.Code.String() != "Error" || h.SpanContext.TraceState().Get("vendor") != "x" {
		t.Errorf("server span: kind %v status %v tracestate %q", h.SpanKind, h.Status, h.SpanContext.TraceState())
	}
	if r.Parent.SpanID() != h.SpanContext.SpanID() || s.Parent.SpanID() != r.SpanContext.SpanID() {
		t.Errorf("parents: refresh %s (want %s), store %s (want %s)", r.Parent.SpanID(), h.SpanContext.SpanID(), s.Parent.SpanID(), r.SpanContext.SpanID())
	}
	if s.SpanKind != trace.SpanKindClient {
		t.Errorf("store span kind %v", s.SpanKind)
	}
	var code int64
	for _, a := range h.Attributes {
		if a.Key == "http.response.status_code" {
			code = a.Value.AsInt64()
		}
	}
	if code != 503 {
		t.Errorf("status code attribute %d, want 503", code)
	}
}

func TestStatusBelow500IsNoError(t *testing.T) {
	_, exp := memTracer(t, 1)
	_, end := obs.Start(context.Background(), obs.KindHTTP, "GET /v1/x")
	end(obs.StatusError(404))
	if s := exp.GetSpans()[0]; s.Status.Code.String() == "Error" {
		t.Fatalf("a 404 marked the server span failed: %v", s.Status)
	}
	_, end = obs.Start(context.Background(), obs.KindSync, "git")
	end(errors.New(strings.Repeat("é", 300)))
	s := exp.GetSpans()[1]
	if s.Status.Code.String() != "Error" || len(s.Status.Description) > maxErrorText+len("…") || !strings.HasPrefix(s.Status.Description, "éé") {
		t.Fatalf("a failed sync: status %q (%d bytes)", s.Status.Description, len(s.Status.Description))
	}
}

func TestNoParentNoStoreSpan(t *testing.T) {
	_, exp := memTracer(t, 1)
	for _, k := range []obs.Kind{obs.KindStore, obs.KindSafetyScan} {
		ctx, end := obs.Start(context.Background(), k, "x")
		if trace.SpanContextFromContext(ctx).IsValid() {
			t.Errorf("%v without a parent made a span", k)
		}
		end(nil)
	}
	// Carry of a context without a span takes a session's stale one away.
	ctx, end := obs.Start(context.Background(), obs.KindHTTP, "POST /mcp")
	end(nil)
	if c := obs.Carry(ctx, context.Background()); trace.SpanContextFromContext(c).IsValid() {
		t.Error("Carry from a context without a span kept the old span")
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Fatalf("%d spans, want only the HTTP one", n)
	}
}

func TestMalformedRemoteStartsANewTrace(t *testing.T) {
	_, exp := memTracer(t, 1)
	for _, tp := range []string{"junk", "00-" + parentTrace + "-" + parentSpan, "00-00000000000000000000000000000000-" + parentSpan + "-01",
		"00-" + parentTrace + "-0000000000000000-01", "ff-" + parentTrace + "-" + parentSpan + "-01", "00-" + strings.ToUpper(parentTrace) + "-" + parentSpan + "-01"} {
		ctx := obs.WithRemote(context.Background(), tp, "")
		_, end := obs.Start(ctx, obs.KindHTTP, "GET /")
		end(nil)
	}
	for _, s := range exp.GetSpans() {
		if s.Parent.IsValid() || s.SpanContext.TraceID().String() == parentTrace {
			t.Errorf("a malformed traceparent was continued: %+v", s.Parent)
		}
	}
}

func TestSampling(t *testing.T) {
	_, exp := memTracer(t, 0)
	_, end := obs.Start(context.Background(), obs.KindHTTP, "GET /")
	end(nil)
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("ratio 0 recorded %d spans", n)
	}
	// A caller that sampled its trace is followed, and its children too.
	ctx, end := obs.Start(obs.WithRemote(context.Background(), traceparent, ""), obs.KindHTTP, "GET /")
	_, endStore := obs.Start(ctx, obs.KindStore, "Get")
	endStore(nil)
	end(nil)
	if n := len(exp.GetSpans()); n != 2 {
		t.Fatalf("a sampled caller's trace: %d spans, want 2", n)
	}
}

func TestTracesURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://c:4318":               "http://c:4318/v1/traces",
		"http://c:4318/":              "http://c:4318/v1/traces",
		"https://x.io/otlp/v1/traces": "https://x.io/otlp/v1/traces",
	} {
		if got, err := TracesURL(in); err != nil || got != want {
			t.Errorf("TracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "c:4318", "grpc://c:4317", "http://"} {
		if _, err := TracesURL(bad); err == nil || !strings.Contains(err.Error(), "tracing.endpoint") {
			t.Errorf("TracesURL(%q) = %v, want an error naming tracing.endpoint", bad, err)
		}
	}
}
