package attack

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// Jaeger (compat/jaeger, a module of its own) is the real OTLP receiver
// the tracing tests export to: its all-in-one server, with in-memory
// storage, an OTLP/HTTP receiver and the query API the tests read the
// spans back from.

// jaegerBin is the Jaeger binary, built once per machine into the user's
// cache (testutil.GoTool; a cold build takes minutes, from the modules
// `cd compat/jaeger && go mod download` fetched: the build downloads
// nothing).
func jaegerBin(t testing.TB) string {
	t.Helper()
	return testutil.GoTool(t, "compat/jaeger", "github.com/jaegertracing/jaeger/cmd/jaeger")
}

// jaeger is one running Jaeger.
type jaeger struct {
	OTLP  string        // the OTLP/HTTP endpoint: http://127.0.0.1:PORT
	query string        // the query API: http://127.0.0.1:PORT
	mem   *otlpReceiver // instead of Jaeger, unless LOADOUT_JAEGER is set (traces_otlp_test.go)
}

const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// startJaeger starts Jaeger on free loopback ports and waits until its
// receiver and query API answer. It is stopped when the test ends.
func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	if !useJaeger() {
		r, url := startOTLPReceiver(t)
		return &jaeger{OTLP: url, mem: r}
	}
	bin := jaegerBin(t)
	dir := t.TempDir()
	otlp, qhttp, qgrpc := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, qhttp, qgrpc, otlp), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", "file:"+cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() }) // after the stop below: cleanups run last first
	testutil.StopAtCleanup(t, cmd)
	j := &jaeger{OTLP: fmt.Sprintf("http://127.0.0.1:%d", otlp), query: fmt.Sprintf("http://127.0.0.1:%d", qhttp)}
	deadline := testutil.After(t)
	for {
		if r, err := http.Post(j.OTLP+"/v1/traces", "application/json", strings.NewReader("{}")); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				if q, err := http.Get(j.query + "/api/services"); err == nil {
					q.Body.Close()
					if q.StatusCode == 200 {
						return j
					}
				}
			}
		}
		select {
		case <-deadline:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("Jaeger did not start:\n%s", log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// jaegerSpan is a span as Jaeger's query API returns it.
type jaegerSpan struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	ProcessID string `json:"processID"`
}

func (s jaegerSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (s jaegerSpan) tag(k string) string {
	for _, t := range s.Tags {
		if t.Key == k {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// trace returns the spans Jaeger holds of a trace (none: nil).
func (j *jaeger) trace(t testing.TB, id string) ([]jaegerSpan, map[string]string) {
	t.Helper()
	if j.mem != nil {
		spans, services := j.mem.trace(id)
		return spans, services
	}
	r, err := http.Get(j.query + "/api/traces/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	if r.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	body, _ := io.ReadAll(r.Body)
	var out struct {
		Data []struct {
			Spans     []jaegerSpan `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatalf("Jaeger's answer for trace %s: %v\n%s", id, err, body)
	}
	services := map[string]string{}
	var spans []jaegerSpan
	for _, d := range out.Data {
		spans = append(spans, d.Spans...)
		for k, p := range d.Processes {
			services[k] = p.ServiceName
		}
	}
	return spans, services
}

// waitTrace polls Jaeger until the trace holds a span named each of names
// (the server sends a batch within tracing.BatchDelay).
func (j *jaeger) waitTrace(t testing.TB, id string, names ...string) ([]jaegerSpan, map[string]string) {
	t.Helper()
	deadline := testutil.After(t)
	for {
		spans, services := j.trace(t, id)
		have := map[string]bool{}
		for _, s := range spans {
			have[s.OperationName] = true
		}
		all := true
		for _, n := range names {
			all = all && have[n]
		}
		if all {
			return spans, services
		}
		select {
		case <-deadline:
			var got []string
			for _, s := range spans {
				got = append(got, s.OperationName)
			}
			t.Fatalf("trace %s in Jaeger has %q, want every one of %q", id, got, names)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
