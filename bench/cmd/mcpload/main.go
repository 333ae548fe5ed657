// Command mcpload measures MCP tool calls per second with the go-sdk
// client, over several servers in interleaved rounds (A, B, C, A, B, C…),
// so that the figures of one run are comparable on a busy machine.
//
//	mcpload -config targets.json [-c 64] [-d 5s] [-rounds 3] [-warm 1s]
//
// targets.json is a list of targets, each
//
//	{"label": "floor-stdio", "tool": "read_skill_file", "args": {...},
//	 "cmd": ["mcpfloor", "-file", "F"]}            // stdio: one process
//	{"label": "floor-http", "tool": "...", "args": {...},
//	 "url": "http://127.0.0.1:P/mcp", "token": ""}  // streamable HTTP
//
// "argsList" (a list of argument objects) spreads the calls: each caller
// walks the list round-robin from its own offset, so a tool that takes a
// skill name is called over many skills rather than one hot one.
//
// -client picks the client: "sdk" (default) is the go-sdk's own client;
// "raw" (HTTP targets only) is a minimal client that posts each call as
// one JSON-RPC body with the headers the go-sdk client sends after
// initialize (Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id)
// and reads the JSON answer. The go-sdk client costs more CPU per call
// than a lean server, so on 2 cores it caps calls/s; the raw client leaves
// the server as the bottleneck. Both check every answer (no isError).
//
// Over stdio a server process has one session, so the -c callers share it
// (the SDK multiplexes their calls); over HTTP each caller opens its own
// session. Every call must succeed (no isError) and the first reply's
// content size is printed, to show the servers return comparable bytes.
// Every target is connected before the first round (a slow start-up does
// not count), then warmed up for -warm.
//
// The output ends with one line per target:
//
//	RESULT label calls_per_s p50_us p99_us bytes cpu_us
//
// calls/s is the median of the rounds; p50 and p99 are over all rounds'
// calls. cpu_us is the server's CPU time (user and system, from
// /proc/PID/stat) per call, the median of the rounds (each round's line
// also gives mcpload's own CPU per call), or - when the server's
// process is not known: a stdio server is the process mcpload starts; an
// HTTP target names its server with "pid". The client's own CPU weighs on
// calls/s (over stdio on 2 cores it is most of the machine), not on cpu_us,
// so cpu_us compares what the servers cost.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/bench/internal/hdrflag"
	"github.com/loadout/loadout/internal/cputime"
)

type target struct {
	Label string          `json:"label"`
	Tool  string          `json:"tool"`
	Args  json.RawMessage `json:"args"`
	// ArgsList, when set, spreads the calls over these arguments.
	ArgsList []json.RawMessage `json:"argsList"`
	Cmd      []string          `json:"cmd"`
	Env      []string          `json:"env"`
	URL      string            `json:"url"`
	Token    string            `json:"token"`
	PID      int               `json:"pid"`

	sessions []*mcp.ClientSession
	raws     []*rawSession
	raw      bool
	bytes    int
	rates    []float64
	cpu      []float64
	lat      []time.Duration
}

func main() {
	config := flag.String("config", "", "JSON list of targets")
	conns := flag.Int("c", 64, "concurrent callers per target")
	dur := flag.Duration("d", 5*time.Second, "duration of each target's turn in a round")
	rounds := flag.Int("rounds", 3, "rounds")
	warm := flag.Duration("warm", time.Second, "warm-up per target before the first round")
	warmPass := flag.Bool("warm-pass", false, "warm up with one call of every argument set too (a server's first call of each skill may do work once, e.g. a digest), printing that pass's figures")
	initTimeout := flag.Duration("init-timeout", 10*time.Minute, "how long a target may take to start and answer initialize")
	proto := flag.String("protocol", "2025-06-18", "MCP revision the client asks for")
	clientKind := flag.String("client", "sdk", "client: sdk (the go-sdk's) or raw (a minimal JSON-RPC client; HTTP targets only)")
	extract := flag.String("extract-text", "", "print the first text content of the tools/call answer in this `FILE` and exit (bench scripts use it to give the floor loadout's bytes)")
	flag.Parse()
	if *extract != "" {
		if err := extractText(*extract); err != nil {
			fatal(err)
		}
		return
	}
	data, err := os.ReadFile(*config)
	if err != nil {
		fatal(err)
	}
	var targets []*target
	if err := json.Unmarshal(data, &targets); err != nil {
		fatal(fmt.Errorf("%s: %v", *config, err))
	}
	tr := &http.Transport{MaxIdleConns: 4 * *conns, MaxIdleConnsPerHost: 4 * *conns, DisableCompression: true}
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpload", Version: "1"}, nil)
	opts := &mcp.ClientSessionOptions{ProtocolVersion: *proto}

	// Connect every target at once: a server that indexes at start-up
	// (skillserver) may take minutes.
	var wg sync.WaitGroup
	errs := make([]error, len(targets))
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), *initTimeout)
			defer cancel()
			t0 := time.Now()
			if t.raw {
				errs[i] = t.connectRaw(ctx, hc, *proto, *conns)
			} else {
				errs[i] = t.connect(ctx, client, hc, opts, *conns)
			}
			if errs[i] == nil {
				fmt.Printf("# %s: %d session(s) ready in %s (%s client, %d argument sets)\n", t.Label, max(len(t.sessions), len(t.raws)), time.Since(t0).Round(time.Millisecond), *clientKind, len(t.ArgsList))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fatal(err)
	}
	for _, t := range targets {
		n, err := t.check()
		if err != nil {
			fatal(fmt.Errorf("%s: %v", t.Label, err))
		}
		t.bytes = n
		if *warmPass && len(t.ArgsList) > 1 {
			c0, ok0 := cputime.Of(t.PID)
			t0 := time.Now()
			if err := t.pass(*conns); err != nil {
				fatal(fmt.Errorf("%s: %v", t.Label, err))
			}
			el := time.Since(t0)
			cpu := ""
			if c1, ok1 := cputime.Of(t.PID); ok0 && ok1 {
				cpu = fmt.Sprintf(" server_cpu_us/call=%.1f", float64((c1-c0)/time.Microsecond)/float64(len(t.ArgsList)))
			}
			fmt.Printf("# %s: first pass over %d argument sets: calls/s=%.0f%s (not counted)\n", t.Label, len(t.ArgsList), float64(len(t.ArgsList))/el.Seconds(), cpu)
		}
		if *warm > 0 {
			if _, _, err := t.run(*conns, *warm); err != nil {
				fatal(fmt.Errorf("%s: %v", t.Label, err))
			}
		}
	}
	for r := 1; r <= *rounds; r++ {
		for _, t := range targets {
			c0, ok0 := cputime.Of(t.PID)
			m0, okm0 := cputime.Of(os.Getpid())
			rate, lat, err := t.run(*conns, *dur)
			if err != nil {
				fatal(fmt.Errorf("%s: %v", t.Label, err))
			}
			c1, ok1 := cputime.Of(t.PID)
			m1, okm1 := cputime.Of(os.Getpid())
			t.rates = append(t.rates, rate)
			t.lat = append(t.lat, lat...)
			cpu := ""
			if ok0 && ok1 && len(lat) > 0 {
				us := float64((c1-c0)/time.Microsecond) / float64(len(lat))
				t.cpu = append(t.cpu, us)
				cpu = fmt.Sprintf(" server_cpu_us/call=%.1f", us)
			}
			if okm0 && okm1 && len(lat) > 0 {
				// The client's own CPU: when it is near the server's, the
				// client bounds calls/s as much as the server does.
				cpu += fmt.Sprintf(" client_cpu_us/call=%.1f", float64((m1-m0)/time.Microsecond)/float64(len(lat)))
			}
			fmt.Printf("round %d %-18s calls/s=%.0f%s\n", r, t.Label, rate, cpu)
		}
	}
	for _, t := range targets {
		sort.Float64s(t.rates)
		sort.Slice(t.lat, func(i, j int) bool { return t.lat[i] < t.lat[j] })
		pct := func(p float64) int64 {
			if len(t.lat) == 0 {
				return 0
			}
			return t.lat[int(float64(len(t.lat)-1)*p)].Microseconds()
		}
		cpu := "-"
		if len(t.cpu) == len(t.rates) {
			sort.Float64s(t.cpu)
			cpu = fmt.Sprintf("%.1f", t.cpu[len(t.cpu)/2])
		}
		fmt.Printf("RESULT %s %.0f %d %d %d %s\n", t.Label, t.rates[len(t.rates)/2], pct(0.5), pct(0.99), t.bytes, cpu)
	}
	for _, t := range targets {
		for _, s := range t.sessions {
			s.Close()
			if t.URL == "" {
				break // one stdio session, shared
			}
		}
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mcpload:", err)
	os.Exit(1)
}

func (t *target) connect(ctx context.Context, client *mcp.Client, hc *http.Client, opts *mcp.ClientSessionOptions, conns int) error {
	if (len(t.Cmd) == 0) == (t.URL == "") {
		return fmt.Errorf("%s: give cmd or url", t.Label)
	}
	if len(t.Cmd) > 0 {
		cmd := exec.Command(t.Cmd[0], t.Cmd[1:]...)
		cmd.Env = append(os.Environ(), t.Env...)
		cmd.Stderr = os.Stderr
		s, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
		if err != nil {
			return fmt.Errorf("%s: %v", t.Label, err)
		}
		for range conns {
			t.sessions = append(t.sessions, s)
		}
		if t.PID == 0 && cmd.Process != nil {
			t.PID = cmd.Process.Pid
		}
		return nil
	}
	if !strings.HasPrefix(t.URL, "http://127.") && !strings.HasPrefix(t.URL, "http://localhost") {
		return fmt.Errorf("%s: only loopback URLs", t.Label)
	}
	if t.Token != "" {
		c := *hc
		c.Transport = hdrflag.Bearer(t.Token, hc.Transport)
		hc = &c
	}
	// The server may still be starting: retry the first session.
	for {
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
		if err == nil {
			t.sessions = append(t.sessions, s)
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %v", t.Label, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	for len(t.sessions) < conns {
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, opts)
		if err != nil {
			return fmt.Errorf("%s: session %d: %v", t.Label, len(t.sessions)+1, err)
		}
		t.sessions = append(t.sessions, s)
	}
	return nil
}

func (t *target) call(ctx context.Context, s *mcp.ClientSession, args json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: t.Tool, Arguments: args})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		msg := ""
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				msg += tc.Text
			}
		}
		return nil, fmt.Errorf("isError: %.300s", msg)
	}
	return res, nil
}

// check makes one call and returns the size of its reply's content.
func (t *target) check() (int, error) {
	if t.raw {
		return t.raws[0].call(t.Tool, t.ArgsList[0])
	}
	res, err := t.call(context.Background(), t.sessions[0], t.ArgsList[0])
	if err != nil {
		return 0, err
	}
	b, _ := json.Marshal(res)
	return len(b), nil
}

// run calls as fast as the callers can for d and returns calls/s and each
// call's latency.
func (t *target) run(conns int, d time.Duration) (float64, []time.Duration, error) {
	ctx := context.Background()
	deadline := time.Now().Add(d)
	lat := make([][]time.Duration, conns)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	start := time.Now()
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each caller walks the argument sets from its own offset.
			i := c * len(t.ArgsList) / conns
			for time.Now().Before(deadline) && failed.Load() == nil {
				args := t.ArgsList[i]
				i = (i + 1) % len(t.ArgsList)
				t0 := time.Now()
				var err error
				if t.raw {
					_, err = t.raws[c].call(t.Tool, args)
				} else {
					_, err = t.call(ctx, t.sessions[c], args)
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if p := failed.Load(); p != nil {
		return 0, nil, *p
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	return float64(len(all)) / elapsed.Seconds(), all, nil
}

// rawSession is one session of the raw client: a session id (none from a
// stateless server) and the next request id.
type rawSession struct {
	hc    *http.Client
	url   string
	token string
	proto string
	sid   string
	id    int64
}

// post sends one JSON-RPC body with the headers the go-sdk client sends.
func (r *rawSession) post(body []byte, init bool) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if !init {
		req.Header.Set("Mcp-Protocol-Version", r.proto)
	}
	if r.sid != "" {
		req.Header.Set("Mcp-Session-Id", r.sid)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, data, err
}

// open initializes the session, as a client does: initialize, then
// notifications/initialized.
func (r *rawSession) open() error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpload","version":"1"}}}`, r.proto)
	resp, data, err := r.post([]byte(body), true)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("initialize: HTTP %d: %.200s", resp.StatusCode, data)
	}
	r.sid = resp.Header.Get("Mcp-Session-Id")
	resp, data, err = r.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), false)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: HTTP %d: %.200s", resp.StatusCode, data)
	}
	return nil
}

// call makes one tool call and returns the size of the answer's result;
// an HTTP error, a JSON-RPC error, another id or isError fail it.
func (r *rawSession) call(tool string, args json.RawMessage) (int, error) {
	r.id++
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, r.id, tool, args)
	resp, data, err := r.post(body, false)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct == "text/event-stream" {
		if i := bytes.Index(data, []byte("data: ")); i >= 0 {
			data = data[i+6:]
		}
	}
	var msg struct {
		ID     int64 `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &msg); err != nil {
		return 0, fmt.Errorf("answer is not JSON-RPC: %v: %.300s", err, data)
	}
	if msg.Result == nil || msg.Result.IsError || msg.ID != r.id {
		return 0, fmt.Errorf("bad answer to call %d: %.300s", r.id, data)
	}
	return len(data), nil
}

func (t *target) connectRaw(ctx context.Context, hc *http.Client, proto string, conns int) error {
	if !strings.HasPrefix(t.URL, "http://127.") && !strings.HasPrefix(t.URL, "http://localhost") {
		return fmt.Errorf("%s: only loopback URLs", t.Label)
	}
	for len(t.raws) < conns {
		r := &rawSession{hc: hc, url: t.URL, token: t.Token, proto: proto}
		err := r.open()
		if err != nil && len(t.raws) == 0 {
			// The server may still be starting: retry the first session.
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %v", t.Label, err)
			case <-time.After(200 * time.Millisecond):
				continue
			}
		}
		if err != nil {
			return fmt.Errorf("%s: session %d: %v", t.Label, len(t.raws)+1, err)
		}
		t.raws = append(t.raws, r)
	}
	return nil
}

// extractText prints the first text content of the JSON-RPC answer in
// path (a JSON body, or one SSE event).
func extractText(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if i := bytes.Index(data, []byte("data: ")); i >= 0 {
		data = data[i+6:]
	}
	var msg struct {
		Result *struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &msg); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if msg.Result == nil || msg.Result.IsError || len(msg.Result.Content) == 0 || msg.Result.Content[0].Type != "text" {
		return fmt.Errorf("%s: not a successful answer with a text content: %.300s", path, data)
	}
	_, err = os.Stdout.WriteString(msg.Result.Content[0].Text)
	return err
}

// pass calls every argument set once, the callers sharing the list.
func (t *target) pass(conns int) error {
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for failed.Load() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(t.ArgsList) {
					return
				}
				var err error
				if t.raw {
					_, err = t.raws[c].call(t.Tool, t.ArgsList[i])
				} else {
					_, err = t.call(context.Background(), t.sessions[c], t.ArgsList[i])
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	if p := failed.Load(); p != nil {
		return *p
	}
	return nil
}
