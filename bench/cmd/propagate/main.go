// Command propagate measures how long a write through one loadout server
// takes to be served by another sharing its store:
//
//	propagate -a http://127.0.0.1:7001 -b http://127.0.0.1:7002 -agent a -skill NAME [-n 5]
//
// Each round reads NAME's SKILL.md from A (GET /v1/skills/NAME/files/SKILL.md),
// puts a fresh marker word at the start of its description and on the last
// line of its body, writes it back
// through A (PUT, If-Match: *), then polls B every -poll until B's load of
// the skill (GET /v1/agents/AGENT/skills/NAME) holds the marker and until
// B's search for the marker (GET /v1/agents/AGENT/search?q=MARKER) finds
// the skill. Times are from just before the PUT. It prints one line per
// round and a summary line:
//
//	propagate rounds=5 put_p50=… put_max=… load_p50=… load_max=… search_p50=… search_max=…
//
// Only loopback servers are allowed.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	a := flag.String("a", "", "base URL of the server written through")
	b := flag.String("b", "", "base URL of the server watched")
	agent := flag.String("agent", "a", "agent whose load and search are watched on B")
	name := flag.String("skill", "", "stored skill to edit")
	rounds := flag.Int("n", 5, "rounds")
	poll := flag.Duration("poll", 2*time.Millisecond, "polling interval on B")
	timeout := flag.Duration("timeout", 60*time.Second, "give up on a round after this long")
	flag.Parse()
	if *a == "" || *b == "" || *name == "" {
		fmt.Fprintln(os.Stderr, "propagate: give -a, -b and -skill")
		os.Exit(2)
	}
	for _, u := range []string{*a, *b} {
		if !strings.HasPrefix(u, "http://127.") && !strings.HasPrefix(u, "http://localhost") {
			fmt.Fprintln(os.Stderr, "propagate: only loopback servers are allowed")
			os.Exit(2)
		}
	}
	var put, load, search []time.Duration
	for r := range *rounds {
		p, l, s, err := round(*a, *b, *agent, *name, *poll, *timeout)
		if err != nil {
			fmt.Fprintf(os.Stderr, "propagate: round %d: %v\n", r+1, err)
			os.Exit(1)
		}
		fmt.Printf("round=%d put=%s load_on_b=%s search_on_b=%s\n", r+1, ms(p), ms(l), ms(s))
		put, load, search = append(put, p), append(load, l), append(search, s)
	}
	fmt.Printf("propagate rounds=%d put_p50=%s put_max=%s load_p50=%s load_max=%s search_p50=%s search_max=%s\n",
		*rounds, ms(p50(put)), ms(maxOf(put)), ms(p50(load)), ms(maxOf(load)), ms(p50(search)), ms(maxOf(search)))
}

var (
	markerRE     = regexp.MustCompile(`Use when working on (zqm[0-9a-f]+ )?`)
	bodyMarkerRE = regexp.MustCompile(`\nMarker zqm[0-9a-f]+\.\n$`)
)

func round(a, b, agent, name string, poll, timeout time.Duration) (put, load, search time.Duration, err error) {
	fileURL := a + "/v1/skills/" + url.PathEscape(name) + "/files/SKILL.md"
	old, err := get(fileURL)
	if err != nil {
		return 0, 0, 0, err
	}
	var rb [6]byte
	rand.Read(rb[:])
	marker := "zqm" + hex.EncodeToString(rb[:])
	if !markerRE.Match(old) {
		return 0, 0, 0, fmt.Errorf("%s: no %q in its SKILL.md to mark (a skill of bench/gen is needed)", name, "Use when working on")
	}
	done := false
	text := markerRE.ReplaceAllFunc(old, func(m []byte) []byte {
		if done {
			return m
		}
		done = true
		return []byte("Use when working on " + marker + " ")
	})
	// The load envelope holds the body, not the description: mark both.
	text = append(bodyMarkerRE.ReplaceAll(text, nil), "\nMarker "+marker+".\n"...)
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPut, fileURL, bytes.NewReader(text))
	req.Header.Set("If-Match", "*")
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return 0, 0, 0, fmt.Errorf("PUT %s: %s: %s", fileURL, resp.Status, body)
	}
	put = time.Since(start)
	loadURL := b + "/v1/agents/" + url.PathEscape(agent) + "/skills/" + url.PathEscape(name)
	searchURL := b + "/v1/agents/" + url.PathEscape(agent) + "/search?limit=5&q=" + marker
	// Each on its own, so a slow search does not delay seeing the load.
	watch := func(u, want string) <-chan time.Duration {
		ch := make(chan time.Duration, 1)
		go func() {
			for time.Since(start) < timeout {
				if got, err := get(u); err == nil && bytes.Contains(got, []byte(want)) {
					ch <- time.Since(start)
					return
				}
				time.Sleep(poll)
			}
			ch <- 0
		}()
		return ch
	}
	lch, sch := watch(loadURL, marker), watch(searchURL, `"`+name+`"`)
	load, search = <-lch, <-sch
	if load == 0 || search == 0 {
		return 0, 0, 0, fmt.Errorf("%s not on %s after %s (load seen: %v, search seen: %v)", marker, b, timeout, load != 0, search != 0)
	}
	return put, load, search, nil
}

func get(u string) ([]byte, error) {
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", u, resp.Status, body)
	}
	return body, nil
}

func p50(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func maxOf(ds []time.Duration) time.Duration {
	m := ds[0]
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/1e6) }
