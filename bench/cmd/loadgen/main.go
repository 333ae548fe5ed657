// Command loadgen drives a running loadout server on loopback and prints
// throughput and latency: `loadgen -url URL [-c 64] [-d 10s]` for plain
// GETs, or `loadgen -mcp URL -tool NAME -args JSON` for MCP tool calls over
// streamable HTTP (each connection initializes its own session first).
// It stops by itself after -d or -n requests. -H 'Name: value' (repeated)
// adds request headers, so a run measures what real clients send:
// -H 'Accept-Encoding: gzip' (the transport never asks for compression by
// itself, so the bytes on the wire are the ones the headers ask for), or
// -H 'If-None-Match: "TAG"' for a poller (a 304 then counts as success).
// With `-urls FILE` (one URL per line) the GETs spread over many URLs: each
// connection walks them round-robin, starting at its own offset.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loadout/loadout/bench/internal/hdrflag"
)

func main() {
	url := flag.String("url", "", "GET this URL")
	urlsFile := flag.String("urls", "", "GET the URLs of this `FILE` (one per line), each connection walking them round-robin from its own offset")
	mcpURL := flag.String("mcp", "", "MCP streamable HTTP endpoint")
	tool := flag.String("tool", "read_skill_file", "MCP tool to call")
	args := flag.String("args", `{}`, "MCP tool arguments (JSON)")
	conns := flag.Int("c", 64, "connections")
	dur := flag.Duration("d", 10*time.Second, "duration")
	maxReq := flag.Int64("n", 0, "stop after this many requests (0: no limit)")
	token := flag.String("token", "", "bearer token")
	label := flag.String("label", "", "label for the result line")
	rate := flag.Float64("rate", 0, "offered load in requests/s across all connections (0: as fast as possible); latency is measured from each request's scheduled time, so queueing counts")
	var headers hdrflag.Flags
	flag.Var(&headers, "H", "request header 'Name: value' for -url (repeatable)")
	flag.Parse()
	urls, err := readURLs(*urlsFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	if len(urls) > 0 && *url == "" {
		*url = urls[0]
	}
	if (*url == "") == (*mcpURL == "") {
		fmt.Fprintln(os.Stderr, "loadgen: give -url (or -urls) or -mcp")
		os.Exit(2)
	}
	for _, u := range append([]string{*url, *mcpURL}, urls...) {
		if u != "" && !strings.HasPrefix(u, "http://127.") && !strings.HasPrefix(u, "http://localhost") && !strings.HasPrefix(u, "http://[::1]") {
			fmt.Fprintln(os.Stderr, "loadgen: only loopback targets are allowed")
			os.Exit(2)
		}
	}
	tr := &http.Transport{MaxIdleConns: *conns, MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	var total, failed atomic.Int64
	lat := make([][]time.Duration, *conns)
	deadline := time.Now().Add(*dur)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < *conns; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var do func() error
			switch {
			case len(urls) > 0:
				i := c * len(urls) / *conns
				do = func() error {
					u := urls[i]
					i = (i + 1) % len(urls)
					return get(client, u, *token, headers)
				}
			case *url != "":
				do = func() error { return get(client, *url, *token, headers) }
			default:
				sess, err := initialize(client, *mcpURL, *token)
				if err != nil {
					fmt.Fprintln(os.Stderr, "loadgen: initialize:", err)
					failed.Add(1)
					return
				}
				body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, *tool, *args))
				do = func() error { return call(client, *mcpURL, *token, sess, body) }
			}
			var interval time.Duration
			next := time.Now()
			if *rate > 0 {
				interval = time.Duration(float64(*conns) / *rate * float64(time.Second))
				next = next.Add(time.Duration(c) * interval / time.Duration(*conns))
			}
			for time.Now().Before(deadline) {
				if *maxReq > 0 && total.Load() >= *maxReq {
					return
				}
				t0 := time.Now()
				if interval > 0 {
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
					t0 = next // count time spent waiting behind a slow request
					next = next.Add(interval)
				}
				err := do()
				lat[c] = append(lat[c], time.Since(t0))
				total.Add(1)
				if err != nil {
					if failed.Add(1) == 1 {
						fmt.Fprintln(os.Stderr, "loadgen: first error:", err)
					}
				}
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[int(float64(len(all)-1)*p)]
	}
	fmt.Printf("%s requests=%d errors=%d conns=%d duration=%s rps=%.0f p50=%s p99=%s max=%s\n", *label, total.Load(), failed.Load(), *conns,
		elapsed.Round(time.Millisecond), float64(total.Load())/elapsed.Seconds(), pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
	if failed.Load() > 0 {
		os.Exit(1)
	}
}

// readURLs reads -urls: one URL per line, blank lines skipped.
func readURLs(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-urls: %w", err)
	}
	var urls []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			urls = append(urls, l)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("-urls %s: no URL in the file; give one per line", path)
	}
	return urls, nil
}

func get(c *http.Client, url, token string, headers hdrflag.Flags) error {
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		req.Header.Add(h[0], h[1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 && (resp.StatusCode != 304 || req.Header.Get("If-None-Match") == "") {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func post(c *http.Client, url, token, sess string, body []byte) (*http.Response, error) {
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sess != "" {
		req.Header.Set("Mcp-Session-Id", sess)
	}
	return c.Do(req)
}

func initialize(c *http.Client, url, token string) (string, error) {
	resp, err := post(c, url, token, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"loadgen","version":"1"}}}`))
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("initialize: status %d", resp.StatusCode)
	}
	sess := resp.Header.Get("Mcp-Session-Id")
	r2, err := post(c, url, token, sess, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err == nil {
		io.Copy(io.Discard, r2.Body)
		r2.Body.Close()
	}
	return sess, err
}

func call(c *http.Client, url, token, sess string, body []byte) error {
	resp, err := post(c, url, token, sess, body)
	if err != nil {
		return err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	// The reply may be JSON or one SSE event; either way it must hold a
	// result without isError.
	if i := bytes.Index(data, []byte("data: ")); i >= 0 {
		data = data[i+6:]
	}
	var msg struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &msg); err != nil || msg.Result == nil || msg.Result.IsError {
		return fmt.Errorf("bad reply: %.200s", data)
	}
	return nil
}
