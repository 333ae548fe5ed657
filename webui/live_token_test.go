package webui

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/service"
)

// sessionStream opens /ui/events with a session cookie; br is nil when
// the stream was refused (body then holds the refusal).
func sessionStream(t *testing.T, ctx context.Context, base, session string) (resp *http.Response, br *bufio.Reader, body string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/ui/events", nil)
	req.AddCookie(&http.Cookie{Name: service.SessionCookie, Value: session})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, nil, string(b)
	}
	br = bufio.NewReader(resp.Body)
	if ev := readEvent(t, br); ev["event"] != "hello" {
		t.Fatalf("first event %v, want hello", ev)
	}
	return resp, br, ""
}

// TestLiveStreamsPerToken: one token's streams are
// capped below the global cap, so a token opening stream after stream
// gets 503 for its own while another token's stream opens; and a
// revoked token's streams end within a second while the others go on.
func TestLiveStreamsPerToken(t *testing.T) {
	e := newAuthEnvOpt(t, true, Options{MaxLiveStreams: 4, MaxLiveStreamsPerToken: 2, LiveHeartbeat: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mk := func(scope string) (string, string) {
		secret, tok, err := e.svc.CreateToken(ctx, service.Principal{Open: true}, scope, []string{scope})
		if err != nil {
			t.Fatal(err)
		}
		sess, _, err := e.svc.StartSession(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID, sess
	}
	_, adminSess := mk("admin")
	opsID, opsSess := mk("agent:ops")
	_, devSess := mk("agent:dev")

	var ops []*bufio.Reader
	for i := range 2 {
		res, br, body := sessionStream(t, ctx, e.srv.URL, opsSess)
		if br == nil {
			t.Fatalf("ops's stream %d of its cap of 2: %d %s", i+1, res.StatusCode, body)
		}
		ops = append(ops, br)
	}
	for range 5 {
		res, br, body := sessionStream(t, ctx, e.srv.URL, opsSess)
		if br != nil || res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" || !strings.Contains(body, "this token") {
			t.Fatalf("ops's stream past its cap: %d %q", res.StatusCode, body)
		}
	}
	// The admin is not shut out by ops's streams.
	_, admin, body := sessionStream(t, ctx, e.srv.URL, adminSess)
	if admin == nil {
		t.Fatalf("the admin's stream was refused while one agent held its streams: %s", body)
	}
	// The global cap still holds: dev takes the last place, then no one.
	if _, br, body := sessionStream(t, ctx, e.srv.URL, devSess); br == nil {
		t.Fatalf("dev's stream under the global cap: %s", body)
	}
	if res, br, _ := sessionStream(t, ctx, e.srv.URL, devSess); br != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatal("a stream past the global cap was opened")
	}

	// Revoked: ops's streams end, the admin's goes on.
	if err := e.svc.RevokeToken(ctx, service.Principal{Open: true}, opsID); err != nil {
		t.Fatal(err)
	}
	for i, br := range ops {
		if !testutil.EndsWithin(br, time.Second) {
			t.Fatalf("ops's stream %d still open a second after its token was revoked", i+1)
		}
	}
	line, err := admin.ReadString('\n')
	if err != nil {
		t.Fatalf("the admin's stream ended with ops's: %q %v", line, err)
	}
	// Their places are free again: a new stream (the admin's) opens.
	if _, br, body := sessionStream(t, ctx, e.srv.URL, adminSess); br == nil {
		t.Errorf("a revoked token's streams still hold their places: %s", body)
	}
}

// TestLiveTokenPlaceFreedOnClose: a token's stream that closes gives its
// place back to that token (and only that place): with a cap of 2, after
// one of two streams closes the token opens one more, and then is at its
// cap again. The hub keeps nothing for a token once its last stream is
// gone.
func TestLiveTokenPlaceFreedOnClose(t *testing.T) {
	e := newAuthEnvOpt(t, true, Options{MaxLiveStreams: 8, MaxLiveStreamsPerToken: 2, LiveHeartbeat: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secret, _, err := e.svc.CreateToken(ctx, service.Principal{Open: true}, "ops", []string{"agent:ops"})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := e.svc.StartSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	firstCtx, closeFirst := context.WithCancel(ctx)
	if _, br, body := sessionStream(t, firstCtx, e.srv.URL, sess); br == nil {
		t.Fatalf("the first stream: %s", body)
	}
	if _, br, body := sessionStream(t, ctx, e.srv.URL, sess); br == nil {
		t.Fatalf("the second stream, at the cap: %s", body)
	}
	if res, br, _ := sessionStream(t, ctx, e.srv.URL, sess); br != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatal("a third stream opened past the token's cap of 2")
	}
	closeFirst()
	// The server sees the first stream gone at its next heartbeat.
	deadline := time.Now().Add(3 * time.Second)
	for {
		res, br, body := sessionStream(t, ctx, e.srv.URL, sess)
		if br != nil {
			break
		}
		if res.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("the closed stream's place was not given back to its token: %d %s", res.StatusCode, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res, br, _ := sessionStream(t, ctx, e.srv.URL, sess); br != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatal("a stream opened past the token's cap after one closed: a closed stream gave back more than its place")
	}

	// The hub itself: one token's streams join and leave; its count goes
	// when the last one leaves.
	h := newLiveHub(e.svc, 8, 2)
	a, b := &liveClient{token: "t1", wake: make(chan struct{}, 1)}, &liveClient{token: "t1", wake: make(chan struct{}, 1)}
	for _, c := range []*liveClient{a, b} {
		if err := h.join(c); err != nil {
			t.Fatal(err)
		}
	}
	h.leave(a)
	h.mu.Lock()
	n, kept := h.byToken["t1"]
	h.mu.Unlock()
	if n != 1 || !kept {
		t.Fatalf("after one of two streams left, the token counts %d (kept %v), want 1", n, kept)
	}
	h.leave(b)
	h.mu.Lock()
	left := len(h.byToken)
	h.mu.Unlock()
	if left != 0 {
		t.Errorf("the hub still counts %d tokens after their last stream left", left)
	}
}

// TestLiveStreamsPerTokenDefault: without MaxLiveStreamsPerToken a token
// gets DefaultMaxLiveStreamsPerToken streams, exactly: the last of them
// opens, the one after is refused as this token's.
func TestLiveStreamsPerTokenDefault(t *testing.T) {
	e := newAuthEnvOpt(t, true, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	secret, _, err := e.svc.CreateToken(ctx, service.Principal{Open: true}, "ops", []string{"agent:ops"})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := e.svc.StartSession(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	for i := range DefaultMaxLiveStreamsPerToken {
		if res, br, body := sessionStream(t, ctx, e.srv.URL, sess); br == nil {
			t.Fatalf("stream %d of the default %d: %d %s", i+1, DefaultMaxLiveStreamsPerToken, res.StatusCode, body)
		}
	}
	if res, br, body := sessionStream(t, ctx, e.srv.URL, sess); br != nil || res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "this token") {
		t.Fatalf("a stream past the default per-token cap: %d %q", res.StatusCode, body)
	}
}
