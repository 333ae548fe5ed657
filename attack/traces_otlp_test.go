package attack

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// The tracing tests export to an OTLP/HTTP receiver and read the spans
// back. Which receiver:
//
//   - By default, otlpReceiver below: an OTLP/HTTP endpoint made of the
//     OTLP protocol's own protobuf types (go.opentelemetry.io/proto/otlp),
//     which decodes exactly what a collector would receive. It builds in
//     seconds.
//   - With LOADOUT_JAEGER=1, a real Jaeger (compat/jaeger; fetch its
//     modules first: cd compat/jaeger && go mod download). Its build takes
//     5 to 6 minutes of CPU on a 2-core machine, more than the CI budget
//     leaves, so CI runs the receiver above and Jaeger runs on demand
//     (docs/testing.md). Both answer the same questions, so every
//     assertion runs against either.
func useJaeger() bool { return os.Getenv("LOADOUT_JAEGER") != "" }

// otlpReceiver keeps the spans it receives, by trace id, in the shape
// Jaeger's query API returns them (jaegerSpan), so that the tests read
// either the same way.
type otlpReceiver struct {
	mu       sync.Mutex
	traces   map[string][]jaegerSpan
	services map[string]string // process id -> service name
	requests int
}

// startOTLPReceiver serves POST /v1/traces (OTLP/HTTP, protobuf, gzip or
// not) on a loopback port until the test ends.
func startOTLPReceiver(t testing.TB) (*otlpReceiver, string) {
	t.Helper()
	r := &otlpReceiver{traces: map[string][]jaegerSpan{}, services: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *otlpReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "OTLP/HTTP traces only: POST /v1/traces", http.StatusNotFound)
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf, got "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = io.LimitReader(req.Body, 16<<20)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = io.LimitReader(zr, 64<<20)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var export coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &export); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	for _, rs := range export.ResourceSpans {
		service := attrString(rs.GetResource().GetAttributes(), "service.name")
		pid := fmt.Sprintf("p%d", len(r.services)+1)
		for k, v := range r.services {
			if v == service {
				pid = k
			}
		}
		r.services[pid] = service
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				js := toJaegerSpan(s, pid)
				r.traces[js.TraceID] = append(r.traces[js.TraceID], js)
			}
		}
	}
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(out)
}

// trace is what Jaeger's /api/traces/ID answers, read from the receiver.
func (r *otlpReceiver) trace(id string) ([]jaegerSpan, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	spans := append([]jaegerSpan(nil), r.traces[id]...)
	if len(spans) == 0 {
		return nil, nil
	}
	services := map[string]string{}
	for k, v := range r.services {
		services[k] = v
	}
	return spans, services
}

var spanKinds = map[tracepb.Span_SpanKind]string{
	tracepb.Span_SPAN_KIND_SERVER:   "server",
	tracepb.Span_SPAN_KIND_CLIENT:   "client",
	tracepb.Span_SPAN_KIND_PRODUCER: "producer",
	tracepb.Span_SPAN_KIND_CONSUMER: "consumer",
}

// toJaegerSpan turns an OTLP span into the shape Jaeger's query API gives
// it: ids in hex, the parent as a CHILD_OF reference, attributes as tags,
// the kind as the span.kind tag and the trace state as w3c.tracestate (as
// Jaeger's own translation of OTLP does).
func toJaegerSpan(s *tracepb.Span, pid string) jaegerSpan {
	js := jaegerSpan{TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId), OperationName: s.Name, ProcessID: pid}
	if len(s.ParentSpanId) > 0 {
		js.References = append(js.References, struct {
			RefType string `json:"refType"`
			TraceID string `json:"traceID"`
			SpanID  string `json:"spanID"`
		}{"CHILD_OF", js.TraceID, hex.EncodeToString(s.ParentSpanId)})
	}
	tag := func(k string, v any) {
		js.Tags = append(js.Tags, struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		}{k, v})
	}
	for _, kv := range s.Attributes {
		tag(kv.Key, attrValue(kv.Value))
	}
	if k, ok := spanKinds[s.Kind]; ok {
		tag("span.kind", k)
	}
	if s.TraceState != "" {
		tag("w3c.tracestate", s.TraceState)
	}
	if s.Status != nil && s.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
		tag("error", true)
	}
	return js
}

func attrValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	}
	return strings.TrimSpace(fmt.Sprint(v.GetValue()))
}

func attrString(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}
