package httpapi_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadout/loadout/httpapi"
)

// limitedServer serves "ok" (and /block, which waits for release) behind
// a tracked LimitListener.
type limitedServer struct {
	t       *testing.T
	ln      *httpapi.ConnLimiter
	addr    string
	release chan struct{}
	entered chan struct{}
}

func newLimitedServer(t *testing.T, lim httpapi.ConnLimits) *limitedServer {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if lim.Logger == nil {
		lim.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &limitedServer{t: t, ln: httpapi.LimitListener(raw, lim), addr: raw.Addr().String(),
		release: make(chan struct{}), entered: make(chan struct{}, 64)}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			s.entered <- struct{}{}
			<-s.release
		}
		w.Write([]byte("ok"))
	}), ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute}
	s.ln.Track(hs)
	go hs.Serve(s.ln)
	t.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
		hs.Close()
	})
	return s
}

func (s *limitedServer) dial(src string) net.Conn {
	s.t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		s.t.Fatalf("dial from %s: %v", src, err)
	}
	s.t.Cleanup(func() { c.Close() })
	return c
}

// open waits until the limiter counts n open connections.
func (s *limitedServer) open(n int) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		open, _, _ := httpapi.ListenerStats(s.ln)
		if open == n {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d connections open, want %d", open, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// get sends GET path on c (kept alive) and reports whether "ok" came back.
func get(c net.Conn, br *bufio.Reader, path string) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path); err != nil {
		return err
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != "ok" {
		return fmt.Errorf("%d %q", res.StatusCode, b)
	}
	return nil
}

// closedByServer reports whether the server closed c (a read ends with
// EOF or a reset) within 5 s.
func closedByServer(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer c.SetReadDeadline(time.Time{})
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestConnLimitEvictsHalfOpen: at the per-address bound, a new connection
// takes the place of the one of that address that has waited longest
// without sending a whole request header (nothing, or half a request
// line), and is served; the others are left alone. At exactly the bound
// minus one, nothing is closed.
func TestConnLimitEvictsHalfOpen(t *testing.T) {
	s := newLimitedServer(t, httpapi.ConnLimits{Max: 100, MaxPerIP: 4})
	var half []net.Conn
	for i := range 3 {
		c := s.dial("127.0.0.1")
		if i == 1 {
			fmt.Fprintf(c, "GET /hea") // half a request line
		}
		half = append(half, c)
		s.open(i + 1)
	}
	// The fourth place is free: no one is closed for it.
	c4 := s.dial("127.0.0.1")
	if err := get(c4, bufio.NewReader(c4), "/"); err != nil {
		t.Fatalf("the connection at the bound was not served: %v", err)
	}
	if _, _, _, ev := s.ln.Stats(); ev != 0 {
		t.Fatalf("%d connections closed under the bound", ev)
	}
	// Past it: the oldest half-open one goes, the new one is served.
	c5 := s.dial("127.0.0.1")
	if err := get(c5, bufio.NewReader(c5), "/"); err != nil {
		t.Fatalf("a client that sends its request was refused while half-open connections held the places: %v", err)
	}
	if !closedByServer(half[0]) {
		t.Fatal("the oldest half-open connection was not closed")
	}
	// Another one: the half request line is next.
	c6 := s.dial("127.0.0.1")
	if err := get(c6, bufio.NewReader(c6), "/"); err != nil {
		t.Fatalf("not served: %v", err)
	}
	if !closedByServer(half[1]) {
		t.Fatal("the half-open connection with half a request line was not closed")
	}
	// The served connections (c4, c5, c6) and half[2] hold the four places.
	s.open(4)
	if _, _, refused, ev := s.ln.Stats(); ev != 2 || refused != 0 {
		t.Errorf("closed %d, refused %d: want 2 and 0", ev, refused)
	}
	// Other addresses are not touched by this address's bound.
	c7 := s.dial("127.0.0.2")
	if err := get(c7, bufio.NewReader(c7), "/"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	if _, _, _, ev := s.ln.Stats(); ev != 2 {
		t.Errorf("another address's connection closed one of 127.0.0.1's: %d closed", ev)
	}
}

// TestConnLimitIdleAfterFresh: a connection that has completed a request
// and waits for the next is closed only when none waits for its first,
// and then the one idle the longest.
func TestConnLimitIdleAfterFresh(t *testing.T) {
	s := newLimitedServer(t, httpapi.ConnLimits{Max: 100, MaxPerIP: 3})
	a, b := s.dial("127.0.0.1"), s.dial("127.0.0.1")
	ar, br := bufio.NewReader(a), bufio.NewReader(b)
	if err := get(a, ar, "/"); err != nil {
		t.Fatal(err)
	}
	if err := get(b, br, "/"); err != nil {
		t.Fatal(err)
	}
	fresh := s.dial("127.0.0.1")
	s.open(3)
	// The never-used one goes first, though a and b are older.
	c := s.dial("127.0.0.1")
	if !closedByServer(fresh) {
		t.Fatal("the connection that sent nothing was not closed first")
	}
	if err := get(c, bufio.NewReader(c), "/"); err != nil {
		t.Fatal(err)
	}
	// Now only served connections: the one idle the longest (a) goes.
	d := s.dial("127.0.0.1")
	if !closedByServer(a) {
		t.Fatal("the connection idle the longest was not closed")
	}
	if err := get(b, br, "/"); err != nil {
		t.Errorf("a connection idle for less time was closed: %v", err)
	}
	if err := get(d, bufio.NewReader(d), "/"); err != nil {
		t.Errorf("the new connection was not served: %v", err)
	}
}

// TestConnLimitBusyNotEvicted: connections in a request are never closed
// to make room; with every place busy the new connection is refused, and
// at the global bound one address's idle connection makes room for
// another's.
func TestConnLimitBusyNotEvicted(t *testing.T) {
	s := newLimitedServer(t, httpapi.ConnLimits{Max: 3, MaxPerIP: 2})
	var wg sync.WaitGroup
	busy := func(src string) {
		c := s.dial(src)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := get(c, bufio.NewReader(c), "/block"); err != nil {
				t.Errorf("a request in flight was cut: %v", err)
			}
		}()
		<-s.entered
	}
	busy("127.0.0.1")
	busy("127.0.0.1")
	late := s.dial("127.0.0.1")
	if !closedByServer(late) {
		t.Fatal("a connection over the per-address bound was kept while every place was busy")
	}
	if _, _, refused, ev := s.ln.Stats(); refused != 1 || ev != 0 {
		t.Fatalf("refused %d, closed %d: want 1 and 0", refused, ev)
	}
	// The global bound: 127.0.0.2's fresh connection is the one to go
	// when 127.0.0.3 comes.
	other := s.dial("127.0.0.2")
	s.open(3)
	third := s.dial("127.0.0.3")
	if !closedByServer(other) {
		t.Fatal("at the global bound the connection that sent nothing was not closed for a new one")
	}
	if err := get(third, bufio.NewReader(third), "/"); err != nil {
		t.Fatalf("not served at the global bound: %v", err)
	}
	close(s.release)
	wg.Wait()
}

// TestConnLimitHalfOpenFlood: one address keeps its whole share of
// connections open without sending a request, reopening each one closed;
// another client on the same address, one request per new connection,
// is still served (the loopback and proxy case, where every client has
// one address).
func TestConnLimitHalfOpenFlood(t *testing.T) {
	const perIP = 64
	s := newLimitedServer(t, httpapi.ConnLimits{Max: 1000, MaxPerIP: perIP})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range perIP + 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
				if err != nil {
					continue
				}
				c.Write([]byte("GET /x HT"))
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				c.Read(make([]byte, 1)) // until the server closes it
				c.Close()
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	ok, n := 0, 200
	for range n {
		c, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
		if err == nil {
			if get(c, bufio.NewReader(c), "/") == nil {
				ok++
			}
			c.Close()
		}
	}
	close(stop)
	wg.Wait()
	if ok < n*99/100 {
		t.Errorf("%d of %d requests served while one client held its share half-open; want 99%%", ok, n)
	}
	if _, _, _, ev := s.ln.Stats(); ev == 0 {
		t.Error("no half-open connection was closed: the flood did not reach the bound")
	}
}

// logLines is a slog destination that tests can read while the server
// writes to it.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// wait returns the lines holding msg once there are n of them (or fails
// after 5 s).
func (l *logLines) wait(t *testing.T, msg string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		var got []string
		for _, line := range strings.Split(l.b.String(), "\n") {
			if strings.Contains(line, msg) {
				got = append(got, line)
			}
		}
		l.mu.Unlock()
		if len(got) >= n || time.Now().After(deadline) {
			if len(got) != n {
				t.Fatalf("%d log lines with %q, want %d:\n%s", len(got), msg, n, strings.Join(got, "\n"))
			}
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConnLimitLogs: a refusal and an eviction each write one line to the
// configured logger, naming the bound, the count so far, and the
// clients; more of the same within 10 s are counted into the next line
// rather than written each.
func TestConnLimitLogs(t *testing.T) {
	out := &logLines{}
	s := newLimitedServer(t, httpapi.ConnLimits{Max: 100, MaxPerIP: 1, Logger: slog.New(slog.NewTextHandler(out, nil))})
	const refusedMsg, closedMsg = "connections refused", "connections closed to make room"

	// 127.0.0.1's one place is busy: two more are refused, one line.
	busy := s.dial("127.0.0.1")
	done := make(chan error, 1)
	go func() { done <- get(busy, bufio.NewReader(busy), "/block") }()
	<-s.entered
	for range 2 {
		if !closedByServer(s.dial("127.0.0.1")) {
			t.Fatal("a connection over the bound was kept while the one place was busy")
		}
	}
	line := out.wait(t, refusedMsg, 1)[0]
	for _, want := range []string{"limit=maxConnsPerIP", "refused=1 ", "open=1 ", "client=127.0.0.1 ", "client_open=1 ", "max_conns=100 ", "max_conns_per_ip=1"} {
		if !strings.Contains(line, want) {
			t.Errorf("the refusal line lacks %q: %s", want, line)
		}
	}

	// 127.0.0.2 opens three connections that send nothing: two are closed
	// to make room, one line.
	first := s.dial("127.0.0.2")
	s.open(2)
	second := s.dial("127.0.0.2")
	if !closedByServer(first) {
		t.Fatal("the connection that sent nothing was not closed for a new one")
	}
	s.dial("127.0.0.2")
	if !closedByServer(second) {
		t.Fatal("the second connection that sent nothing was not closed for a new one")
	}
	line = out.wait(t, closedMsg, 1)[0]
	for _, want := range []string{"limit=maxConnsPerIP", "closed=1 ", "open=2 ", "client=127.0.0.2 ", "closed_client=127.0.0.2 "} {
		if !strings.Contains(line, want) {
			t.Errorf("the eviction line lacks %q: %s", want, line)
		}
	}
	if _, _, refused, ev := s.ln.Stats(); refused != 2 || ev != 2 {
		t.Errorf("refused %d, closed %d: want 2 and 2", refused, ev)
	}
	// Still one line of each: the second refusal and the second eviction
	// were within 10 s of the first.
	out.wait(t, refusedMsg, 1)
	out.wait(t, closedMsg, 1)
	close(s.release)
	if err := <-done; err != nil {
		t.Errorf("the request in flight: %v", err)
	}
}

// TestConnLimitZeroPerIPIsNoBound: MaxPerIP 0 means no per-address bound:
// one address's connections that have sent nothing are all kept (none
// closed for the next), up to Max.
func TestConnLimitZeroPerIPIsNoBound(t *testing.T) {
	s := newLimitedServer(t, httpapi.ConnLimits{Max: 100})
	var conns []net.Conn
	for i := range 5 {
		conns = append(conns, s.dial("127.0.0.1"))
		s.open(i + 1)
	}
	for i, c := range conns {
		if err := get(c, bufio.NewReader(c), "/"); err != nil {
			t.Errorf("connection %d of one address, with no per-address bound: %v", i+1, err)
		}
	}
	if _, _, refused, ev := s.ln.Stats(); refused != 0 || ev != 0 {
		t.Errorf("refused %d, closed %d under no per-address bound: want 0 and 0", refused, ev)
	}
}
