// Package tracing turns loadout's operation marks (internal/obs) into
// OpenTelemetry spans exported over OTLP/HTTP. It is the only package of
// loadout that imports OpenTelemetry; cmd registers a Tracer as the obs
// observer when the config names an endpoint, and when it names none no
// tracer exists and the marks cost one atomic load (docs/tracing.md).
//
// Spans: each HTTP request (a server span named "METHOD ROUTE"), each MCP
// request (named by its method, or "tools/call TOOL"), each store
// transaction (a client span named by the store method), each catalog
// refresh and each source it reads, each remote sync and each safety
// check of the catalog. Store queries and safety checks are traced only
// inside a traced operation: on their own (a receipt flush in the
// background) they would each be a trace of one span.
//
// The exporter sends batches from a bounded queue (MaxQueue spans; past
// it spans are dropped and counted, never waited for), each export
// bounded by Options.Timeout: a collector that hangs or refuses slows no
// request.
package tracing

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/loadout/loadout/internal/obs"
)

// The bounds of the export.
const (
	// MaxQueue is the most spans waiting for export; more are dropped.
	MaxQueue = 2048
	// MaxBatch is the most spans in one export.
	MaxBatch = 512
	// BatchDelay is the longest a span waits before its batch is sent.
	BatchDelay = 2 * time.Second
	// DefaultTimeout bounds one export, retries included.
	DefaultTimeout = 10 * time.Second
	// maxErrorText bounds the error message kept on a failed span.
	maxErrorText = 256
)

// Options configure a Tracer (config's "tracing" object).
type Options struct {
	// Endpoint is the OTLP/HTTP endpoint: a base URL ("http://host:4318",
	// to which /v1/traces is added) or the full URL of the traces path.
	Endpoint string
	// Headers are sent with every export.
	Headers map[string]string
	// SampleRatio is the share of new traces recorded (0 to 1); a request
	// carrying a trace context follows its caller's sampled flag.
	SampleRatio float64
	// ServiceName is the resource's service.name ("loadout" if empty).
	ServiceName string
	// ServiceVersion is the resource's service.version, if any.
	ServiceVersion string
	// Timeout bounds one export (DefaultTimeout if zero).
	Timeout time.Duration
	// Logger gets the exporter's failures, at most one line a minute
	// (slog.Default() if nil).
	Logger *slog.Logger
}

// Tracer is an obs.Observer (and obs.Carrier) that records spans.
type Tracer struct {
	tp     *sdktrace.TracerProvider
	tr     trace.Tracer
	prop   propagation.TraceContext
	logger *slog.Logger
	// lastLog is when the last export failure was logged (Unix seconds).
	lastLog atomic.Int64
	// failures counts export failures.
	failures atomic.Int64
}

var (
	_ obs.Observer = (*Tracer)(nil)
	_ obs.Carrier  = (*Tracer)(nil)
)

// New makes a Tracer exporting to opt.Endpoint. It connects to nothing
// until the first batch is sent, so a collector that is down does not
// stop the server from starting.
func New(opt Options) (*Tracer, error) {
	u, err := TracesURL(opt.Endpoint)
	if err != nil {
		return nil, err
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var exp sdktrace.SpanExporter
	exp, err = otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(u),
		otlptracehttp.WithHeaders(opt.Headers),
		otlptracehttp.WithTimeout(timeout),
		// Retries within the export's own time: a refusing collector
		// costs the exporter's goroutine that long, and no request.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: timeout}),
	)
	if err != nil {
		return nil, err
	}
	return newTracer(opt, sdktrace.WithBatcher(exp,
		sdktrace.WithMaxQueueSize(MaxQueue),
		sdktrace.WithMaxExportBatchSize(MaxBatch),
		sdktrace.WithBatchTimeout(BatchDelay),
		sdktrace.WithExportTimeout(timeout))), nil
}

// newTracer is New with the exporter and span processor given (tests use
// a synchronous one).
func newTracer(opt Options, proc sdktrace.TracerProviderOption) *Tracer {
	name := opt.ServiceName
	if name == "" {
		name = "loadout"
	}
	logger := opt.Logger
	if logger == nil {
		logger = slog.Default()
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if opt.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", opt.ServiceVersion))
	}
	t := &Tracer{logger: logger}
	t.tp = sdktrace.NewTracerProvider(proc,
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(opt.SampleRatio))),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		// A span's attributes, events and links are bounded too.
		sdktrace.WithSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit: 256, AttributeCountLimit: 32,
			EventCountLimit: 8, LinkCountLimit: 4, AttributePerEventCountLimit: 8, AttributePerLinkCountLimit: 8,
		}),
	)
	// The exporter reports its failures through otel's global handler.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(t.exportFailed))
	t.tr = t.tp.Tracer("github.com/loadout/loadout")
	return t
}

// TracesURL is the URL exports go to: endpoint with /v1/traces added when
// it has no path. It fails for anything but an http(s) URL with a host.
func TracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("tracing.endpoint: " + strconv.Quote(endpoint) + " is not an OTLP/HTTP endpoint: give an http:// or https:// URL, like \"http://otel-collector:4318\"")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

func (t *Tracer) exportFailed(err error) {
	t.failures.Add(1)
	now := time.Now().Unix()
	last := t.lastLog.Load()
	if now-last < 60 || !t.lastLog.CompareAndSwap(last, now) {
		return
	}
	t.logger.Warn("traces could not be exported; spans are dropped while the collector is unreachable (logged at most once a minute)", "err", err.Error(), "failures", t.failures.Load())
}

// Failures counts the export failures so far.
func (t *Tracer) Failures() int64 { return t.failures.Load() }

// Shutdown sends the spans still queued and stops the exporter, within
// ctx's time.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// ForceFlush sends the spans queued now, within ctx's time.
func (t *Tracer) ForceFlush(ctx context.Context) error { return t.tp.ForceFlush(ctx) }

// Carry puts from's current span into ctx (none, when from has none).
func (t *Tracer) Carry(ctx, from context.Context) context.Context {
	return trace.ContextWithSpan(ctx, trace.SpanFromContext(from))
}

// carrier is propagation.TextMapCarrier over one obs.Remote.
type carrier obs.Remote

func (c *carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.TraceParent
	case "tracestate":
		return c.TraceState
	}
	return ""
}
func (c *carrier) Set(string, string) {}
func (c *carrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

var kindAttr = [...]attribute.KeyValue{
	obs.KindHTTP:       attribute.String("loadout.op", obs.KindHTTP.String()),
	obs.KindMCP:        attribute.String("loadout.op", obs.KindMCP.String()),
	obs.KindStore:      attribute.String("loadout.op", obs.KindStore.String()),
	obs.KindRefresh:    attribute.String("loadout.op", obs.KindRefresh.String()),
	obs.KindSync:       attribute.String("loadout.op", obs.KindSync.String()),
	obs.KindSafetyScan: attribute.String("loadout.op", obs.KindSafetyScan.String()),
}

// Start begins a span for the operation.
func (t *Tracer) Start(ctx context.Context, kind obs.Kind, name string, attrs []obs.Attr) (context.Context, func(error)) {
	parent := trace.SpanContextFromContext(ctx)
	if !parent.IsValid() {
		switch kind {
		case obs.KindStore, obs.KindSafetyScan:
			// Not inside a traced operation: not traced.
			return ctx, nop
		}
		if r, ok := obs.RemoteFrom(ctx); ok {
			c := carrier(r)
			ctx = t.prop.Extract(ctx, &c)
		}
	}
	sk := trace.SpanKindInternal
	switch kind {
	case obs.KindHTTP:
		sk = trace.SpanKindServer
	case obs.KindMCP:
		if !parent.IsValid() || parent.IsRemote() {
			sk = trace.SpanKindServer // stdio: the MCP request is the server's
		}
	case obs.KindStore:
		sk = trace.SpanKindClient
	}
	kv := make([]attribute.KeyValue, 0, len(attrs)+1)
	if int(kind) < len(kindAttr) {
		kv = append(kv, kindAttr[kind])
	}
	for _, a := range attrs {
		kv = append(kv, attribute.String(a.Key, a.Value))
	}
	ctx, span := t.tr.Start(ctx, name, trace.WithSpanKind(sk), trace.WithAttributes(kv...))
	if !span.IsRecording() {
		// Sampled out: the context still carries the span, so its
		// children are sampled out too.
		return ctx, func(error) { span.End() }
	}
	return ctx, func(err error) {
		if err != nil {
			var st obs.StatusError
			if errors.As(err, &st) {
				span.SetAttributes(attribute.Int("http.response.status_code", int(st)))
				if st >= 500 {
					span.SetStatus(codes.Error, "")
				}
			} else {
				span.SetStatus(codes.Error, errorText(err))
			}
		}
		span.End()
	}
}

func nop(error) {}

// errorText is err's message, cut to maxErrorText bytes (at a rune).
func errorText(err error) string {
	s := err.Error()
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
}
