// Command mcpfloor is the floor of the MCP benchmarks (bench/mcp.sh,
// bench/mcphttp.sh): a bare go-sdk server whose tools ignore their
// arguments and return the bytes of a file read at start-up, as a text
// content. No session bookkeeping, auth, lookups or receipts: what is
// left is the SDK's own cost per call.
//
//	mcpfloor -file F                    # stdio; read_skill_file returns F
//	mcpfloor -file F -addr 127.0.0.1:P  # streamable HTTP at /mcp (JSON responses, as loadout)
//	mcpfloor -tool load_skill=F2 -tool search_skills=F3:json ...
//	mcpfloor ... -stateless             # the SDK's stateless handler, as loadout serve --stateless
//	mcpfloor ... -pprof 127.0.0.1:Q     # Go's profiler, for comparing profiles
//
// -tool NAME=FILE adds a tool returning FILE's bytes; NAME=FILE:json also
// returns them as the structured content (FILE must hold a JSON object),
// as loadout's search_skills answers.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type tools []string

func (t *tools) String() string     { return strings.Join(*t, ",") }
func (t *tools) Set(v string) error { *t = append(*t, v); return nil }

func main() {
	file := flag.String("file", "", "the file whose bytes every read_skill_file call returns")
	addr := flag.String("addr", "", "serve streamable HTTP on this loopback HOST:PORT (default: stdio)")
	stateless := flag.Bool("stateless", false, "over HTTP, the SDK's stateless handler (no sessions)")
	pp := flag.String("pprof", "", "serve Go's profiler on this loopback HOST:PORT")
	var more tools
	flag.Var(&more, "tool", "NAME=FILE[:json]: a tool returning FILE's bytes (repeatable)")
	flag.Parse()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpfloor", Version: "1"}, nil)
	specs := append([]string(nil), more...)
	if *file != "" {
		specs = append(specs, "read_skill_file="+*file)
	}
	if len(specs) == 0 {
		fail(2, "give -file or -tool")
	}
	for _, spec := range specs {
		name, path, ok := strings.Cut(spec, "=")
		if !ok {
			fail(2, "-tool "+spec+": want NAME=FILE[:json]")
		}
		path, structured := strings.CutSuffix(path, ":json")
		data, err := os.ReadFile(path)
		if err != nil {
			fail(2, err.Error())
		}
		text := string(data)
		var sc any
		if structured {
			if !json.Valid(data) {
				fail(2, path+": not JSON")
			}
			sc = json.RawMessage(data)
		}
		srv.AddTool(&mcp.Tool{
			Name:        name,
			Description: "returns the same bytes on every call",
			InputSchema: json.RawMessage(`{"type":"object"}`),
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: sc}, nil
		})
	}
	if *pp != "" {
		mustLoopback(*pp)
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		go http.ListenAndServe(*pp, mux)
	}
	if *addr == "" {
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fail(1, err.Error())
		}
		return
	}
	mustLoopback(*addr)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true, DisableLocalhostProtection: true, Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Fprintln(os.Stderr, "mcpfloor: serving http://"+*addr+"/mcp")
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fail(1, err.Error())
	}
}

func mustLoopback(addr string) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fail(2, addr+": must be a loopback IP:PORT")
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "mcpfloor:", msg)
	os.Exit(code)
}
