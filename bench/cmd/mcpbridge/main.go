// Command mcpbridge serves a stdio MCP server over streamable HTTP, for
// comparing stdio-only servers over HTTP in bench/mcp.sh. It starts the
// command once, opens one client session to it, and offers the command's
// tools on /mcp: each HTTP session's tool calls are forwarded, concurrently,
// over that one stdio session (the go-sdk client multiplexes them), and
// the result is returned as the command sent it. Only tools are bridged.
//
//	mcpbridge -addr 127.0.0.1:P -- COMMAND [ARG...]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback HOST:PORT to serve /mcp on")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "mcpbridge: give the stdio server's command after --")
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(*addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintln(os.Stderr, "mcpbridge: -addr must be a loopback IP:PORT")
		os.Exit(2)
	}
	ctx := context.Background()
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge", Version: "1"}, nil)
	up, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbridge: connect:", err)
		os.Exit(1)
	}
	defer up.Close()
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpbridge", Version: "1"}, nil)
	n := 0
	for t, err := range up.Tools(ctx, nil) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpbridge: tools/list:", err)
			os.Exit(1)
		}
		name := t.Name
		t.OutputSchema = nil // the upstream checked its own output
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return up.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		})
		n++
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{JSONResponse: true, DisableLocalhostProtection: true})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbridge:", err)
		os.Exit(1)
	}
	// The script waits for this line.
	fmt.Fprintf(os.Stderr, "mcpbridge: %d tools of %s on http://%s/mcp\n", n, flag.Arg(0), ln.Addr())
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintln(os.Stderr, "mcpbridge:", err)
		os.Exit(1)
	}
}
