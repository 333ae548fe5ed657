// Command writeload measures file writes to a stored skill as a client of
// a running `loadout serve` makes them: sequential PUT
// /v1/skills/{name}/files/{path} requests, each with the If-Match of the
// answer before, while MCP sessions stay open on the server's endpoints
// (each with its standalone stream, so the server sends them every
// list_changed notification a write causes).
//
//	writeload -url http://127.0.0.1:P -token T -skill NAME -pid PID \
//	  [-mode ref|body|desc] [-path references/guide.md] [-n 200] [-warm 20] \
//	  [-mcp URL,URL] [-sessions 2] [-check URL]
//
// Modes: ref replaces a supporting file (-path); body replaces SKILL.md
// with the same name and description and another body; desc replaces
// SKILL.md with another description. Each write's content differs from
// the one before, so every write makes a new version.
//
// With -check URL (an MCP endpoint whose listing holds the skill), after
// the writes a new session's instructions must hold the description the
// last write left: in desc mode the new one, else the original. A miss
// exits 1.
//
// It prints one line:
//
//	RESULT mode writes p50_ms p99_ms mean_ms cpu_ms_per_write notifications
//
// cpu_ms_per_write is the server's CPU time (user and system, from
// /proc/PID/stat) from the first measured write to 300 ms after the last
// (the work a write leaves to the background counts), over the writes.
// notifications counts the list_changed notifications the sessions got.
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
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/loadout/loadout/bench/internal/hdrflag"
	"github.com/loadout/loadout/internal/cputime"
)

func main() {
	base := flag.String("url", "", "the server's base URL")
	token := flag.String("token", "", "an admin token")
	name := flag.String("skill", "", "the stored skill to write")
	path := flag.String("path", "references/guide.md", "the file ref mode replaces")
	mode := flag.String("mode", "ref", "ref, body or desc")
	n := flag.Int("n", 200, "measured writes")
	warm := flag.Int("warm", 20, "writes before the measured ones")
	pid := flag.Int("pid", 0, "the server's process id (for its CPU time)")
	mcps := flag.String("mcp", "", "comma-separated MCP endpoints to hold sessions on")
	sessions := flag.Int("sessions", 1, "sessions per MCP endpoint")
	check := flag.String("check", "", "an MCP endpoint whose instructions list the skill")
	flag.Parse()
	if err := run(*base, *token, *name, *path, *mode, *n, *warm, *pid, *mcps, *sessions, *check); err != nil {
		fmt.Fprintln(os.Stderr, "writeload:", err)
		os.Exit(1)
	}
}

// descLine is the description in SKILL.md's front matter, with the
// lines a folded or literal block continues on.
var descLine = regexp.MustCompile(`(?m)^description:.*\n(?:[ \t]+.*\n)*`)

func run(base, token, name, path, mode string, n, warm, pid int, mcps string, perEndpoint int, check string) error {
	ctx := context.Background()
	hc := &http.Client{Transport: hdrflag.Bearer(token, http.DefaultTransport), Timeout: 30 * time.Second}

	var notes atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "writeload", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { notes.Add(1) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { notes.Add(1) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { notes.Add(1) },
	})
	var open []*mcp.ClientSession
	defer func() {
		for _, s := range open {
			_ = s.Close()
		}
	}()
	for _, u := range strings.Split(mcps, ",") {
		if u == "" {
			continue
		}
		for range perEndpoint {
			s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u, HTTPClient: hc}, nil)
			if err != nil {
				return fmt.Errorf("session on %s: %v", u, err)
			}
			open = append(open, s)
		}
	}

	// The skill as it is: its ETag, and SKILL.md for the body and desc modes.
	etag, entry, err := get(hc, base+"/v1/skills/"+name+"/files/SKILL.md")
	if err != nil {
		return err
	}
	detail, etag, err := getETag(hc, base+"/v1/skills/"+name)
	if err != nil {
		return err
	}
	var sk struct{ Description string }
	if err := json.Unmarshal(detail, &sk); err != nil {
		return fmt.Errorf("GET /v1/skills/%s: %v", name, err)
	}
	if descLine.Find(entry) == nil {
		return fmt.Errorf("%s: SKILL.md has no description line", name)
	}
	target, lastDesc := path, sk.Description
	content := func(i int) []byte {
		switch mode {
		case "desc":
			lastDesc = fmt.Sprintf("Use when editing write number %d of the write benchmark.", i)
			return descLine.ReplaceAll(entry, []byte("description: "+lastDesc+"\n"))
		case "body":
			return append(bytes.Clone(entry), fmt.Sprintf("\nEdit %d of the body.\n", i)...)
		default:
			return fmt.Appendf(nil, "# Guide\n\nEdit %d of the reference file.\n", i)
		}
	}
	switch mode {
	case "desc", "body":
		target = "SKILL.md"
	case "ref":
	default:
		return fmt.Errorf("mode %q: ref, body or desc", mode)
	}

	put := func(i int) (time.Duration, error) {
		req, _ := http.NewRequest("PUT", base+"/v1/skills/"+name+"/files/"+target, bytes.NewReader(content(i)))
		req.Header.Set("If-Match", etag)
		req.Header.Set("Content-Type", "application/octet-stream")
		start := time.Now()
		res, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		took := time.Since(start)
		if res.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("PUT %s: %s: %s", target, res.Status, body)
		}
		etag = res.Header.Get("ETag")
		return took, nil
	}
	for i := range warm {
		if _, err := put(i); err != nil {
			return err
		}
	}
	time.Sleep(300 * time.Millisecond)
	notes.Store(0)
	c0, ok0 := cputime.Of(pid)
	var lat []time.Duration
	for i := range n {
		d, err := put(warm + i)
		if err != nil {
			return err
		}
		lat = append(lat, d)
	}
	time.Sleep(300 * time.Millisecond)
	c1, ok1 := cputime.Of(pid)

	if check != "" {
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: check, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
		if err != nil {
			return fmt.Errorf("check session on %s: %v", check, err)
		}
		instr := s.InitializeResult().Instructions
		_ = s.Close()
		if !strings.Contains(instr, lastDesc) {
			return fmt.Errorf("a new session on %s does not get the description the last write left (%q) in its instructions", check, lastDesc)
		}
	}

	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	cpu := "-"
	if ok0 && ok1 {
		cpu = fmt.Sprintf("%.2f", float64(c1-c0)/float64(time.Millisecond)/float64(n))
	}
	fmt.Printf("RESULT %s %d %.2f %.2f %.2f %s %d\n", mode, n, ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(sum/time.Duration(n)), cpu, notes.Load())
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func get(hc *http.Client, u string) (string, []byte, error) {
	res, err := hc.Get(u)
	if err != nil {
		return "", nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", u, res.Status, b)
	}
	return res.Header.Get("ETag"), b, err
}

func getETag(hc *http.Client, u string) ([]byte, string, error) {
	tag, b, err := get(hc, u)
	if err == nil && tag == "" {
		err = errors.New("GET " + u + ": no ETag")
	}
	return b, tag, err
}
