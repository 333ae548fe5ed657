package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// The drain, for real: `loadout serve` as a process, SIGTERM while a slow
// request is in flight (its body still arriving). /readyz turns 503 at
// once and /healthz stays 200 (both saying draining); new requests are
// still answered during server.shutdownDelay; then the listener closes;
// the request in flight completes (201, its skill created) after that;
// the process exits 0 and logs the steps in order.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, `{"server": {"shutdownDelay": "2s", "shutdownTimeout": "1m"},
  "agents": [{"agentId": "a", "skills": [{"store": true}]}]}`)
	r := startServe(t, "--config", cfg, "--no-watch")
	// Probes use a connection each, as a kubelet does.
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(path string) (int, map[string]any, error) {
		res, err := probe.Get(r.base + path)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		var m map[string]any
		b, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			return res.StatusCode, nil, fmt.Errorf("%s: %v: %s", path, err, b)
		}
		return res.StatusCode, m, nil
	}
	eventually(t, 30*time.Second, "GET /readyz 200", func() bool {
		code, _, err := get("/readyz")
		return err == nil && code == 200
	})
	code, m, err := get("/readyz")
	if err != nil || code != 200 || m["draining"] != false || fmt.Sprint(m["built"]) != "[catalog search install_indexes diagnostics skill list]" {
		t.Fatalf("/readyz when ready: %d %v %v", code, m, err)
	}

	// The slow request: a create whose body arrives in two parts. The
	// first part is larger than the client's write buffer, so the
	// headers and it are on the wire; the server's handler is reading
	// the body when the signal comes.
	pr, pw := io.Pipe()
	filler := strings.Repeat("A line of the slow skill's body.\n", 2000) // 66 KB
	content := "---\nname: slow\ndescription: Created across a SIGTERM.\n---\n" + filler
	doc, _ := json.Marshal(map[string]any{"schemaVersion": 2, "skill": map[string]any{"name": "slow", "content": content, "files": []any{}}})
	half := len(doc) / 2
	req, _ := http.NewRequest("POST", r.base+"/v1/skills", pr)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = int64(len(doc))
	type result struct {
		code int
		body string
		err  error
	}
	slow := make(chan result, 1)
	go func() {
		res, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
		if err != nil {
			slow <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		slow <- result{code: res.StatusCode, body: string(b)}
	}()
	if _, err := pw.Write(doc[:half]); err != nil {
		t.Fatal(err)
	}

	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "GET /readyz 503 after SIGTERM", func() bool {
		code, m, err := get("/readyz")
		return err == nil && code == 503 && m["draining"] == true
	})
	// Liveness stays 200 while draining, and says so.
	if code, m, err := get("/healthz"); err != nil || code != 200 || m["draining"] != true || m["ready"] != false {
		t.Fatalf("/healthz while draining: %d %v %v", code, m, err)
	}
	// During the delay new requests are still answered.
	if code, _, err := get("/v1/agents"); err != nil || code != 200 {
		t.Fatalf("a new request during the delay: %d %v", code, err)
	}
	// Then the listener closes: new connections are refused...
	eventually(t, 30*time.Second, "the listener closed", func() bool {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(r.base, "http://"), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	// ...while the slow request is still in flight.
	select {
	case res := <-slow:
		t.Fatalf("the slow request ended before its body was sent: %+v", res)
	default:
	}
	if _, err := pw.Write(doc[half:]); err != nil {
		t.Fatalf("the rest of the slow body: %v", err)
	}
	pw.Close()
	var res result
	select {
	case res = <-slow:
	case <-testutil.After(t):
		t.Fatal("the slow request did not complete")
	}
	if res.err != nil || res.code != 201 || !strings.Contains(res.body, `"slow"`) {
		t.Fatalf("the request in flight at SIGTERM: %d %v %s", res.code, res.err, res.body)
	}
	eventually(t, 30*time.Second, "serve logs stopped", func() bool { return strings.Contains(r.log(), "msg=stopped") })
	if err := r.cmd.Wait(); err != nil {
		t.Fatalf("serve's exit: %v\n%s", err, r.log())
	}
	log := r.log()
	last := -1
	for _, step := range []string{`msg="shutting down: not ready (GET /readyz answers 503)" delay=2s timeout=1m0s`,
		`msg="shutting down: listener closed, finishing requests in flight"`, "msg=stopped"} {
		i := strings.Index(log, step)
		if i <= last {
			t.Fatalf("the log lacks %q after the previous step:\n%s", step, log)
		}
		last = i
	}
	if strings.Contains(log, "cut off") {
		t.Fatalf("a request was cut off:\n%s", log)
	}
}

// endingStreams ends a GET event stream when streams ends, and leaves
// every other request (a POST answered as a stream included) to finish.
func TestEndingStreams(t *testing.T) {
	streams, end := context.WithCancel(context.Background())
	ended := make(chan string, 4)
	h := endingStreams(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			ended <- r.Method + " ended"
		case <-time.After(200 * time.Millisecond):
			ended <- r.Method + " finished"
		}
	}), streams)
	do := func(method string) {
		req := httptest.NewRequest(method, "/mcp", nil)
		req.Header.Set("Accept", "application/json, text/event-stream")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	go do("GET")
	go do("POST")
	end()
	got := map[string]bool{<-ended: true, <-ended: true}
	if !got["GET ended"] || !got["POST finished"] {
		t.Fatalf("got %v, want the GET stream ended and the POST finished", got)
	}
}
