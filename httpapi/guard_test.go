package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadout/loadout/httpapi"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/skill"
)

// guarded is an open loopback server (no tokens needed, as by default)
// behind Guard, like `loadout serve`.
func guarded(t *testing.T, opt httpapi.GuardOptions) *env {
	e := newEnvOpt(t, baseFiles, false)
	e.srv.Close()
	srv := httptest.NewUnstartedServer(nil)
	opt.Listen = srv.Listener.Addr().String()
	g, err := httpapi.Guard(opt, e.h)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = g
	srv.Start()
	t.Cleanup(srv.Close)
	e.srv = srv
	return e
}

// TestGuardRefusesForeignHost: a DNS rebinding page reaches the loopback
// server under its own name; every route refuses that Host, and the
// loopback names, the listen address and the allowed names pass.
func TestGuardRefusesForeignHost(t *testing.T) {
	e := guarded(t, httpapi.GuardOptions{AllowedHosts: []string{"skills.example.com", "proxy.example.com:8443"}})
	_, port, _ := net.SplitHostPort(e.srv.Listener.Addr().String())
	want(t, e.do(t, "POST", "/v1/skills", "", doc(t, "gamma", "G.", "g")), 201)
	for _, rt := range httpapi.RouteSpecs() {
		path := rt.Pattern
		for k, v := range accessParams {
			path = strings.ReplaceAll(path, k, v)
		}
		for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port, "proxy.example.com:" + port} {
			r := e.do(t, rt.Method, path, "", nil, "Host", host)
			if r.code != 403 || r.errCode(t) != httpapi.CodeHostNotAllowed {
				t.Errorf("%s %s with Host %s: %d %s, want 403 host_not_allowed", rt.Method, path, host, r.code, r.body)
			}
		}
	}
	// Nothing was deleted by the refused DELETE.
	want(t, e.do(t, "GET", "/v1/skills/gamma", "", nil), 200)
	for _, host := range []string{"localhost:" + port, "LOCALHOST", "localhost.:" + port, "127.0.0.1:" + port, "127.0.0.9", "[::1]:" + port,
		"skills.example.com", "Skills.Example.com:443", "proxy.example.com:8443"} {
		if r := e.do(t, "GET", "/v1/agents", "", nil, "Host", host); r.code != 200 {
			t.Errorf("Host %s: %d %s", host, r.code, r.body)
		}
	}
	if _, err := httpapi.Guard(httpapi.GuardOptions{AllowedHosts: []string{"https://x.example/"}}, e.h); err == nil {
		t.Error("Guard took a URL as a host name")
	}
}

// TestGuardRefusesCrossOrigin: a page of another origin cannot change
// anything, whatever its content type, while non-browser clients, pages
// of this origin and allowed origins can; reads are not refused.
func TestGuardRefusesCrossOrigin(t *testing.T) {
	e := guarded(t, httpapi.GuardOptions{AllowedOrigins: []string{"https://ui.example.com"}})
	host := e.srv.Listener.Addr().String()
	gen := e.svc.Generation()
	for _, c := range []struct {
		method, path, ct string
		body             []byte
		hdr              []string
	}{
		// The report's case: a form-like text/plain POST from a page.
		{"POST", "/v1/skills", "text/plain", doc(t, "gamma", "G.", "g"), []string{"Origin", "http://evil.example"}},
		{"POST", "/v1/skills", "application/json", doc(t, "gamma", "G.", "g"), []string{"Sec-Fetch-Site", "cross-site"}},
		{"POST", "/v1/reload", "text/plain", []byte("x"), []string{"Origin", "http://evil.example"}},
		{"POST", "/v1/reload", "", nil, []string{"Sec-Fetch-Site", "same-site", "Origin", "http://sub." + host}},
		{"PUT", "/v1/skills/gamma", "application/json", doc(t, "gamma", "G.", "g"), []string{"Origin", "null"}},
		{"DELETE", "/v1/skills/alpha", "", nil, []string{"Origin", "http://evil.example"}},
		{"POST", "/v1/import", "application/json", doc(t, "gamma", "G.", "g"), []string{"Origin", "https://ui.example.com.evil.example"}},
	} {
		hdr := append([]string{"Content-Type", c.ct}, c.hdr...)
		r := e.do(t, c.method, c.path, "", c.body, hdr...)
		if r.code != 403 || r.errCode(t) != httpapi.CodeCrossOrigin {
			t.Errorf("%s %s %v: %d %s, want 403 cross_origin", c.method, c.path, c.hdr, r.code, r.body)
		}
	}
	if _, err := e.st.Get(context.Background(), "gamma"); err == nil {
		t.Fatal("a cross-origin request created a skill")
	}
	if e.svc.Generation() != gen {
		t.Error("a cross-origin request reloaded the catalog")
	}
	// Reads from any page pass (the browser keeps the answer from the page).
	want(t, e.do(t, "GET", "/v1/agents", "", nil, "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site"), 200)
	// Non-browser clients, this origin, and an allowed one may write.
	want(t, e.do(t, "POST", "/v1/reload", "", nil), 200)
	want(t, e.do(t, "POST", "/v1/reload", "", nil, "Origin", "http://"+host), 200)
	want(t, e.do(t, "POST", "/v1/reload", "", nil, "Sec-Fetch-Site", "same-origin"), 200)
	want(t, e.do(t, "POST", "/v1/skills", "", doc(t, "gamma", "G.", "g"), "Origin", "https://ui.example.com", "Sec-Fetch-Site", "cross-site"), 201)
}

// TestJSONRoutesNeedJSON: every route that takes a JSON body refuses
// another type (a page can send text/plain without asking), with 415 and
// the expected type named; the file PUT takes any type.
func TestJSONRoutesNeedJSON(t *testing.T) {
	e := newEnvOpt(t, baseFiles, false)
	want(t, e.do(t, "POST", "/v1/skills", "", doc(t, "gamma", "G.", "g")), 201)
	n := 0
	for _, rt := range httpapi.RouteSpecs() {
		if rt.BodyTypes == nil || slices.Contains(rt.BodyTypes, "*/*") {
			continue
		}
		if !slices.Contains(rt.BodyTypes, "application/json") {
			t.Errorf("%s %s takes %v and not JSON", rt.Method, rt.Pattern, rt.BodyTypes)
		}
		n++
		path := strings.ReplaceAll(rt.Pattern, "{name}", "gamma")
		for _, ct := range []string{"text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "nonsense/"} {
			r := e.do(t, rt.Method, path, "", doc(t, "gamma", "G2.", "g2"), "Content-Type", ct, "If-Match", "*")
			wantErr(t, r, 415, httpapi.CodeUnsupportedMediaType)
			if m := r.json(t)["error"].(map[string]any); !strings.Contains(m["message"].(string), "application/json") || m["field"] != "Content-Type" {
				t.Errorf("%s %s: %s", rt.Method, path, r.body)
			}
		}
		// No Content-Type at all (what a page's fetch of a Blob sends).
		req, _ := http.NewRequest(rt.Method, e.srv.URL+path, strings.NewReader(string(doc(t, "gamma", "G2.", "g2"))))
		req.Header.Set("If-Match", "*")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 415 {
			t.Errorf("%s %s without Content-Type: %d", rt.Method, path, res.StatusCode)
		}
		r := e.do(t, rt.Method, path, "", doc(t, "gamma", "G3.", "g3"), "Content-Type", "application/json; charset=utf-8", "If-Match", "*")
		if r.code == 415 {
			t.Errorf("%s %s refused application/json; charset=utf-8", rt.Method, path)
		}
	}
	if n < 3 {
		t.Errorf("%d JSON body routes", n)
	}
	rec, _ := e.st.Get(context.Background(), "gamma")
	if rec.Description != "G3." {
		t.Errorf("gamma is %q", rec.Description)
	}
	// A zip import keeps its types; a file takes any.
	z := zipOf(t, map[string]string{"four/SKILL.md": md("four", "Four.", "4")})
	want(t, e.do(t, "POST", "/v1/import", "", z, "Content-Type", "application/zip"), 200)
	want(t, e.do(t, "POST", "/v1/import", "", z, "Content-Type", "application/x-zip-compressed"), 200)
	want(t, e.do(t, "PUT", "/v1/skills/gamma/files/a.txt", "", []byte("a"), "If-Match", "*", "Content-Type", "text/plain"), 200)
}

// TestWeakETagNeverMatches: If-Match compares strongly, so W/"vN" is a
// 409 with the current version on every conditional write, and nothing
// changes; the strong tag works.
func TestWeakETagNeverMatches(t *testing.T) {
	e := newEnv(t, baseFiles)
	ctx := context.Background()
	r := e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g", skill.BundleFile{Path: "notes.md", Data: []byte("n")}))
	want(t, r, 201)
	tag := r.h.Get("ETag")
	if tag != `"v1"` {
		t.Fatalf("ETag %s", tag)
	}
	weak := "W/" + tag
	for _, c := range []struct {
		method, path string
		body         []byte
		ct           string
	}{
		{"PUT", "/v1/skills/gamma", doc(t, "gamma", "G2.", "g2"), "application/json"},
		{"PUT", "/v1/skills/gamma/files/notes.md", []byte("changed"), "application/octet-stream"},
		{"DELETE", "/v1/skills/gamma/files/notes.md", nil, ""},
		{"POST", "/v1/skills/gamma/versions/1/restore", nil, ""},
		{"DELETE", "/v1/skills/gamma", nil, ""},
	} {
		hdr := []string{"If-Match", weak}
		if c.ct != "" {
			hdr = append(hdr, "Content-Type", c.ct)
		}
		r := e.do(t, c.method, c.path, e.admin, c.body, hdr...)
		wantErr(t, r, 409, "conflict")
		m := r.json(t)["error"].(map[string]any)
		if m["currentVersion"] != float64(1) || !strings.Contains(m["message"].(string), "weak") {
			t.Errorf("%s %s: %s", c.method, c.path, r.body)
		}
	}
	rec, err := e.st.Get(ctx, "gamma")
	if err != nil || rec.Version != 1 || rec.Description != "G." {
		t.Fatalf("a weak If-Match changed the skill: %+v %v", rec, err)
	}
	want(t, e.do(t, "PUT", "/v1/skills/gamma", e.admin, doc(t, "gamma", "G2.", "g2"), "If-Match", tag), 200)
	// If-None-Match on a file compares weakly.
	r = e.do(t, "GET", "/v1/skills/gamma/files/SKILL.md", e.admin, nil)
	want(t, r, 200)
	ftag := r.h.Get("ETag")
	want(t, e.do(t, "GET", "/v1/skills/gamma/files/SKILL.md", e.admin, nil, "If-None-Match", "W/"+ftag), 304)
	want(t, e.do(t, "GET", "/v1/skills/gamma/files/SKILL.md", e.admin, nil, "If-None-Match", `"other", `+ftag), 304)
}

// counting is a body that counts what the server took of it.
type counting struct {
	r io.Reader
	n atomic.Int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestChunkedBodyCapped: a body sent chunked (no Content-Length) over a
// route's cap is refused with 413 while it streams: the server stops
// reading near the cap instead of taking all of it.
func TestChunkedBodyCapped(t *testing.T) {
	e := newEnv(t, baseFiles)
	want(t, e.do(t, "POST", "/v1/skills", e.admin, doc(t, "gamma", "G.", "g")), 201)
	const extra = 96 << 20
	for _, c := range []struct {
		method, path, ct string
		limit            int64
	}{
		{"PUT", "/v1/skills/gamma/files/big.bin", "application/octet-stream", skill.DefaultMaxFileSize},
		{"POST", "/v1/skills", "application/json", skill.DefaultMaxTotalSize*4/3 + 1<<20},
		// An import's cap is the one of every import (the UI's and the
		// CLI's too): portable.LimitsFor's MaxUploadBytes.
		{"POST", "/v1/import", "application/json", portable.DefaultMaxUploadBytes},
		{"POST", "/v1/import", "application/zip", portable.DefaultMaxUploadBytes},
	} {
		body := &counting{r: io.LimitReader(zeros{}, c.limit+extra)}
		req, _ := http.NewRequest(c.method, e.srv.URL+c.path, body)
		req.ContentLength = -1
		req.TransferEncoding = []string{"chunked"}
		req.Header.Set("Authorization", "Bearer "+e.admin)
		req.Header.Set("Content-Type", c.ct)
		req.Header.Set("If-Match", "*")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 413 || !strings.Contains(string(b), `"too_large"`) {
			t.Errorf("%s %s chunked over the cap: %d %s", c.method, c.path, res.StatusCode, b)
		}
		// The cap, plus what sits in buffers and socket windows.
		if got := body.n.Load(); got > c.limit+32<<20 {
			t.Errorf("%s %s: the server read %d bytes of a body capped at %d", c.method, c.path, got, c.limit)
		}
	}
}

// TestSlowBodyCut: a body that stops arriving is cut after the read
// timeout with 408, and the connection closes; a handler still working
// after its body arrived keeps its context, unlike with
// http.Server.ReadTimeout.
func TestSlowBodyCut(t *testing.T) {
	e := newEnvOpt(t, baseFiles, false)
	e.srv.Close()
	const readTimeout = 300 * time.Millisecond
	var ctxErr atomic.Value
	mux := http.NewServeMux()
	mux.Handle("/", e.h)
	mux.HandleFunc("POST /slow-handler", func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		time.Sleep(3 * readTimeout)
		ctxErr.Store(fmt.Sprint(r.Context().Err()))
		w.Write([]byte("done"))
	})
	srv := httptest.NewServer(httpapi.Timeouts(httpapi.TimeoutOptions{Read: readTimeout, Write: time.Minute}, mux))
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/skills HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"schemaVersion\"")
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 408 || !strings.Contains(string(b), httpapi.CodeRequestTimeout) {
		t.Errorf("stalled body: %d %s", res.StatusCode, b)
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection stayed open after the timeout: %v", err)
	}

	res2, err := http.Post(srv.URL+"/slow-handler", "text/plain", strings.NewReader("quick body"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res2.Body)
	res2.Body.Close()
	if string(b) != "done" || ctxErr.Load() != "<nil>" {
		t.Errorf("a handler working past the read timeout: %q, context %v", b, ctxErr.Load())
	}
}

// TestWriteStallCut: a client that stops reading is cut after the write
// timeout, while a stream that writes now and then, to a client that
// reads, lives longer than the timeout.
func TestWriteStallCut(t *testing.T) {
	const writeTimeout = 300 * time.Millisecond
	stalled := make(chan error, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 64<<10)
		for range 4096 { // 256 MiB: more than any socket buffer
			if _, err := w.Write(chunk); err != nil {
				stalled <- err
				return
			}
		}
		stalled <- nil
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "event %d\n", i)
			http.NewResponseController(w).Flush()
			time.Sleep(2 * writeTimeout)
		}
	})
	srv := httptest.NewServer(httpapi.Timeouts(httpapi.TimeoutOptions{Read: time.Minute, Write: writeTimeout}, mux))
	defer srv.Close()

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")
	select {
	case err := <-stalled:
		if err == nil {
			t.Error("256 MiB written to a client that reads nothing")
		}
	case <-testutil.After(t):
		t.Fatal("the write to a client that does not read never gave up")
	}

	res, err := http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Count(string(b), "event") != 3 {
		t.Errorf("a slow stream to a reading client was cut: %q", b)
	}
}

// TestConnectionLimits: past the per-address bound, a new connection from
// that address is closed at once while other addresses are served; past
// the global bound, everyone's are. Idle connections that never send a
// request are closed by ReadHeaderTimeout, which gives their places back.
func TestConnectionLimits(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln := httpapi.LimitListener(raw, httpapi.ConnLimits{Max: 8, MaxPerIP: 5, Logger: quiet})
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }),
		ReadHeaderTimeout: 2 * time.Second} // long enough for the checks below on a busy machine
	go hs.Serve(ln)
	defer hs.Close()
	addr := raw.Addr().String()
	dialFrom := func(src string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial from %s: %v", src, err)
		}
		return c
	}
	// healthy asks for a page on a new connection from src.
	healthy := func(src string) bool {
		c := dialFrom(src)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		return err == nil && res.StatusCode == 200
	}
	var idle []net.Conn
	for range 5 {
		idle = append(idle, dialFrom("127.0.0.1"))
	}
	waitOpen := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			open, _, _ := httpapi.ListenerStats(ln)
			if open == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", open, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitOpen(5)
	if healthy("127.0.0.1") {
		t.Error("a sixth connection from one address was served over a bound of 5")
	}
	if !healthy("127.0.0.2") {
		t.Error("another address was refused while the first held its share")
	}
	waitOpen(5) // the served connection is let go of on the server's time
	for range 3 {
		idle = append(idle, dialFrom("127.0.0.3"))
	}
	waitOpen(8)
	if healthy("127.0.0.4") {
		t.Error("a connection was served over the global bound of 8")
	}
	if _, _, refused := httpapi.ListenerStats(ln); refused != 2 {
		t.Errorf("%d refused, want 2", refused)
	}
	// The idle connections never sent a request: the header timeout closes
	// them, and the server answers again.
	waitOpen(0)
	if !healthy("127.0.0.1") {
		t.Error("not served after the idle connections were closed")
	}
	for _, c := range idle {
		c.Close()
	}
	// The server notices a closed connection on its own time.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, clients, _ := httpapi.ListenerStats(ln)
		if clients == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d client addresses kept after their connections closed", clients)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
}
