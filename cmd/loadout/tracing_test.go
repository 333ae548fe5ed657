package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/internal/obs"
)

func TestStartTracing(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// No endpoint: nothing registered, nothing to stop.
	for _, cfg := range []*config.File{nil, {}} {
		stop, err := startTracing(cfg, quiet)
		if err != nil || obs.Enabled() {
			t.Fatalf("without an endpoint: err %v, observer registered %v", err, obs.Enabled())
		}
		stop()
	}
	cfg := &config.File{Tracing: config.Tracing{Endpoint: "http://127.0.0.1:1", Headers: map[string]string{"X-Key": "${LOADOUT_TEST_TRACE_KEY}"}}}
	stop, err := startTracing(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !obs.Enabled() {
		t.Fatal("an endpoint registered no observer")
	}
	stop()
	if obs.Enabled() {
		t.Fatal("stop left the observer registered")
	}
}

func TestExpandBraced(t *testing.T) {
	t.Setenv("LOADOUT_TEST_TRACE_KEY", "s3cr$t")
	for in, want := range map[string]string{
		"Bearer ${LOADOUT_TEST_TRACE_KEY}": "Bearer s3cr$t",
		"a$b":                              "a$b",
		"${LOADOUT_TEST_UNSET_9}x":         "x",
		"${unclosed":                       "${unclosed",
		"$LOADOUT_TEST_TRACE_KEY":          "$LOADOUT_TEST_TRACE_KEY",
	} {
		if got := expandBraced(in); got != want {
			t.Errorf("expandBraced(%q) = %q, want %q", in, got, want)
		}
	}
}
