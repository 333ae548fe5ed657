package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTracingSection(t *testing.T) {
	f, err := Parse([]byte(`{"tracing": {"endpoint": "http://collector:4318", "headers": {"X-Api-Key": "${KEY}"},
  "sampleRatio": 0.25, "serviceName": "skills-eu", "timeout": "3s"}}`), "/cfg/loadout.json")
	if err != nil {
		t.Fatal(err)
	}
	tr := f.Tracing
	if tr.Endpoint != "http://collector:4318" || tr.Headers["X-Api-Key"] != "${KEY}" || tr.SampleRatio == nil || *tr.SampleRatio != 0.25 ||
		tr.ServiceName != "skills-eu" || time.Duration(tr.Timeout) != 3*time.Second {
		t.Errorf("tracing: %+v", tr)
	}
	// At each bound: accepted.
	many := map[string]string{}
	for i := range maxTracingHeaders {
		many[fmt.Sprintf("X-H%d", i)] = strings.Repeat("v", maxTracingHeaderBytes)
	}
	ok := []Tracing{
		{},
		{Endpoint: "https://otlp.example.com/custom/v1/traces"},
		{Endpoint: "http://c:4318", SampleRatio: new(0.0)},
		{Endpoint: "http://c:4318", SampleRatio: new(1.0)},
		{Endpoint: "http://c:4318", Timeout: Duration(100 * time.Millisecond)},
		{Endpoint: "http://c:4318", Timeout: Duration(MaxTracingTimeout)},
		{Endpoint: "http://c:4318", ServiceName: strings.Repeat("s", maxServiceName)},
		{Endpoint: "http://c:4318", Headers: many},
	}
	for _, tr := range ok {
		if err := tr.validate("f"); err != nil {
			t.Errorf("%+v: %v", tr, err)
		}
	}
}

func TestTracingErrorsNameTheField(t *testing.T) {
	more := map[string]string{}
	for i := range maxTracingHeaders + 1 {
		more[fmt.Sprintf("X-H%d", i)] = "v"
	}
	cases := []struct {
		tr   Tracing
		want string
	}{
		{Tracing{SampleRatio: new(0.5)}, `tracing.endpoint: is empty, but other tracing keys are set`},
		{Tracing{Endpoint: "collector:4318"}, `tracing.endpoint: "collector:4318" is not an OTLP/HTTP endpoint`},
		{Tracing{Endpoint: "grpc://c:4317"}, `tracing.endpoint: "grpc://c:4317" is not`},
		{Tracing{Endpoint: "http://user:pw@c:4318"}, `credentials go in tracing.headers`},
		{Tracing{Endpoint: "http://c:4318?x=1"}, `tracing.endpoint`},
		{Tracing{Endpoint: "http://c:4318", Headers: more}, `tracing.headers: has 33 headers: at most 32`},
		{Tracing{Endpoint: "http://c:4318", Headers: map[string]string{"X Key": "v"}}, `tracing.headers: "X Key" is not a header name`},
		{Tracing{Endpoint: "http://c:4318", Headers: map[string]string{"X-Key": "a\r\nX-Evil: 1"}}, `tracing.headers.X-Key: the value must be one line`},
		{Tracing{Endpoint: "http://c:4318", Headers: map[string]string{"X-Key": strings.Repeat("v", maxTracingHeaderBytes+1)}}, `tracing.headers.X-Key`},
		{Tracing{Endpoint: "http://c:4318", SampleRatio: new(1.5)}, `tracing.sampleRatio: 1.5: give the share`},
		{Tracing{Endpoint: "http://c:4318", SampleRatio: new(-0.1)}, `tracing.sampleRatio: -0.1`},
		{Tracing{Endpoint: "http://c:4318", ServiceName: strings.Repeat("s", maxServiceName+1)}, `tracing.serviceName: must be one line of at most 128 bytes`},
		{Tracing{Endpoint: "http://c:4318", Timeout: Duration(99 * time.Millisecond)}, `tracing.timeout: 99ms: give a duration from 100ms to 1m0s`},
		{Tracing{Endpoint: "http://c:4318", Timeout: Duration(MaxTracingTimeout + 1)}, `tracing.timeout`},
		{Tracing{Endpoint: "http://c:4318", Timeout: Duration(-time.Second)}, `tracing.timeout`},
	}
	for _, c := range cases {
		err := c.tr.validate("/cfg/loadout.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "/cfg/loadout.json") {
			t.Errorf("%+v\n  = %v\n  want it to contain %q and the file name", c.tr, err, c.want)
		}
	}
	// Through Parse, as a user meets it.
	if _, err := Parse([]byte(`{"tracing": {"endpoint": "http://c:4318", "sampleRate": 1}}`), "/cfg/loadout.json"); err == nil || !strings.Contains(err.Error(), `unknown key "sampleRate" (did you mean "sampleRatio"?)`) {
		t.Errorf("a misspelt key: %v", err)
	}
}
