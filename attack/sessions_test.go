package attack

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestHalfOpenFlood (issue 24, item 8): one unauthenticated client on
// loopback, where every client has the same address, keeps 520
// connections open without a complete request (nothing, or half a request
// line), reopening each one the server closes. A legitimate client on the
// same address asks /healthz on a new connection every 20 ms meanwhile:
// at least 99% of its requests must succeed. Before the fix the flood
// held every place of the 512 per address until the header timeout, and
// /healthz failed 145 times out of 148.
func TestHalfOpenFlood(t *testing.T) {
	s := Start(t, Options{})
	addr := strings.TrimPrefix(s.Base, "http://")
	const attackers = 520
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened atomic.Int64
	for i := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				opened.Add(1)
				if i%2 == 1 {
					c.Write([]byte("GET /healthz HT")) // half a request line
				}
				// Hold it until the server lets go of it, or a while.
				c.SetReadDeadline(time.Now().Add(3 * time.Second))
				c.Read(buf)
				c.Close()
			}
		}()
	}
	time.Sleep(time.Second) // the flood fills its places
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	ok, total := 0, 0
	var fails []string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		total++
		resp, err := client.Get(s.Base + "/healthz")
		if err != nil {
			fails = append(fails, err.Error())
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			ok++
		} else {
			fails = append(fails, resp.Status)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("legitimate /healthz: %d of %d succeeded; the flood opened %d connections; server CPU %.1f s, peak RSS %.0f MB",
		ok, total, opened.Load(), s.CPUSeconds(t), s.PeakRSSMB(t))
	if total < 100 {
		t.Fatalf("only %d requests in 10 s: the client was held up", total)
	}
	if ok*100 < total*99 {
		t.Errorf("%d of %d /healthz requests succeeded under the half-open flood, want at least 99%%; failures: %.400q", ok, total, fails)
	}
	if opened.Load() < attackers {
		t.Errorf("the flood opened only %d connections", opened.Load())
	}
	if rss := s.PeakRSSMB(t); rss > 200 {
		t.Errorf("peak RSS %.0f MB under the flood, want under 200", rss)
	}
	s.Healthy(t)
}
