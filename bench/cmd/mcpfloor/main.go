// Command mcpfloor is the floor of the MCP benchmark (bench/mcp.sh): a bare
// go-sdk server with one tool, read_skill_file, that ignores its arguments
// and returns the bytes of one file read at start-up, as a text content.
// No session bookkeeping, auth, lookups or receipts: what is left is the
// SDK's own cost per call.
//
//	mcpfloor -file F                  # stdio
//	mcpfloor -file F -addr 127.0.0.1:P  # streamable HTTP at /mcp (JSON responses, as loadout)
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	file := flag.String("file", "", "the file whose bytes every call returns")
	addr := flag.String("addr", "", "serve streamable HTTP on this loopback HOST:PORT (default: stdio)")
	flag.Parse()
	data, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpfloor:", err)
		os.Exit(2)
	}
	text := string(data)
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpfloor", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "read_skill_file",
		Description: "returns the same bytes on every call",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"path":{"type":"string"}}}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	if *addr == "" {
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "mcpfloor:", err)
			os.Exit(1)
		}
		return
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintln(os.Stderr, "mcpfloor: -addr must be a loopback IP:PORT")
		os.Exit(2)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true, DisableLocalhostProtection: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	fmt.Fprintln(os.Stderr, "mcpfloor: serving http://"+*addr+"/mcp")
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, "mcpfloor:", err)
		os.Exit(1)
	}
}
