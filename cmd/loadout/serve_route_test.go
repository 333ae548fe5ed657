package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAPIRoute: a plain /v1/ path goes straight to the API handler; a
// path a ServeMux would clean or redirect, one outside /v1/, an escaped
// one and CONNECT go through the mux, as before.
func TestAPIRoute(t *testing.T) {
	var got string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(http.ResponseWriter, *http.Request) { got = "mux" })
	h := apiRoute(mux, http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got = "api" }))
	for _, c := range []struct {
		method, target, want string
	}{
		{"GET", "/v1/agents/coder/skills/pdf", "api"},
		{"GET", "/v1/agents/coder/skills/pdf/files/references/a.md", "api"},
		{"GET", "/v1/", "api"},
		{"GET", "/v1/skills/", "api"},
		{"GET", "/v1/skills/a.b", "api"},
		{"GET", "/v1/skills/..a", "api"},
		{"GET", "/v1/skills/a..", "api"},
		{"GET", "/v1/skills/.well-known", "api"},
		{"PUT", "/v1/skills/x", "api"},
		{"GET", "/v1", "mux"},
		{"GET", "/v1x/", "mux"},
		{"GET", "/", "mux"},
		{"GET", "/ui/", "mux"},
		{"GET", "/agents/coder/mcp", "mux"},
		{"GET", "/v1//skills", "mux"},
		{"GET", "/v1/./skills", "mux"},
		{"GET", "/v1/../ui/", "mux"},
		{"GET", "/v1/skills/.", "mux"},
		{"GET", "/v1/skills/..", "mux"},
		{"GET", "/v1/skills/%2Fx", "mux"},
		{"GET", "/v1/a%20b", "api"}, // decoded without a RawPath: as plain
		{"CONNECT", "/v1/skills", "mux"},
	} {
		r := httptest.NewRequest(c.method, "http://127.0.0.1"+c.target, nil)
		got = ""
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if got == "" && w.Code/100 == 3 { // the mux's redirect to the clean path
			got = "mux"
		}
		if got != c.want {
			t.Errorf("%s %s went to %s, want %s", c.method, c.target, got, c.want)
		}
	}
}

// TestAPIRouteAsMux: wherever plainAPIPath says yes, a ServeMux would
// neither clean nor redirect the path, and serve's outer muxes would pick
// their catch-all "/": the fast route changes no answer. The paths are
// every combination of a few segments, dot segments and empty ones
// included.
func TestAPIRouteAsMux(t *testing.T) {
	// The patterns of serve's two outer muxes (serverHandler).
	nop := func(http.ResponseWriter, *http.Request) {}
	top, inner := http.NewServeMux(), http.NewServeMux()
	for _, p := range []string{"/", "/ui/", "GET /{$}", "/i/"} {
		top.HandleFunc(p, nop)
	}
	for _, p := range []string{"/", "/mcp", "/.well-known/", "/agents/{id}/mcp", "/agents/{id}/.well-known/"} {
		inner.HandleFunc(p, nop)
	}
	segs := []string{"", ".", "..", "v1", "a", ".a", "a.", "ui", "mcp", "agents"}
	var paths []string
	var walk func(p string, depth int)
	walk = func(p string, depth int) {
		paths = append(paths, p)
		if depth == 4 {
			return
		}
		for _, s := range segs {
			walk(p+"/"+s, depth+1)
		}
	}
	walk("", 0)
	plain := 0
	for _, p := range paths {
		if p == "" {
			continue
		}
		for _, m := range []string{"GET", "POST"} {
			r := httptest.NewRequest(m, "http://127.0.0.1"+p, nil)
			if !plainAPIPath(r) {
				if strings.HasPrefix(p, "/v1/") && !strings.Contains(p, "/.") && !strings.Contains(p, "//") {
					t.Errorf("%s %s: not taken as plain", m, p)
				}
				continue
			}
			plain++
			for name, mux := range map[string]*http.ServeMux{"top": top, "inner": inner} {
				if _, pat := mux.Handler(r); pat != "/" {
					t.Errorf("%s %s: the %s mux picks %q, not the catch-all", m, p, name, pat)
				}
				w := httptest.NewRecorder()
				mux.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					t.Errorf("%s %s: the %s mux answers %d (a redirect?), not the catch-all", m, p, name, w.Code)
				}
			}
		}
	}
	if plain < 500 {
		t.Errorf("only %d plain paths tried", plain)
	}
}
