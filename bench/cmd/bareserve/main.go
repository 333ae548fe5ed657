// Command bareserve is the floor of the HTTP serving figures: a bare
// net/http handler that answers every request with the same bytes from
// memory. It fetches them once from a running server (-from URL, with
// -token for a server that needs one), keeps the status, Content-Type and
// body, and serves them on -addr until interrupted:
//
//	bareserve -from http://127.0.0.1:8080/v1/agents/bench/skills/NAME -token T -addr 127.0.0.1:9090
//
// -H 'Name: value' (repeated) is sent with the fetch, so that with
// -H 'Accept-Encoding: gzip' it keeps and serves the compressed bytes (with
// their Content-Encoding). It keeps the ETag too, and answers a request
// whose If-None-Match is that ETag with 304, as any server of that body
// would.
//
// It does what any handler must (set the headers, write the body) and
// nothing else, so loadout's cached load route divided by it is the share
// of the machine's HTTP capacity the route reaches (bench/server.sh).
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/bench/internal/hdrflag"
)

func main() {
	from := flag.String("from", "", "fetch the response to serve from this URL (loopback)")
	token := flag.String("token", "", "bearer token for -from")
	addr := flag.String("addr", "127.0.0.1:0", "listen on this loopback HOST:PORT")
	var headers hdrflag.Flags
	flag.Var(&headers, "H", "header 'Name: value' for the fetch from -from (repeatable)")
	flag.Parse()
	if *from == "" || !strings.HasPrefix(*from, "http://127.") {
		fmt.Fprintln(os.Stderr, "bareserve: give -from http://127.x.x.x:PORT/PATH (loopback only)")
		os.Exit(2)
	}
	req, _ := http.NewRequest("GET", *from, nil)
	if *token != "" {
		req.Header.Set("Authorization", "Bearer "+*token)
	}
	for _, h := range headers {
		req.Header.Add(h[0], h[1])
	}
	// A transport that never asks for compression by itself: the bytes
	// kept are the ones the headers asked for.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareserve:", err)
		os.Exit(1)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		fmt.Fprintf(os.Stderr, "bareserve: GET %s: status %d, %v\n", *from, resp.StatusCode, err)
		os.Exit(1)
	}
	ct := []string{resp.Header.Get("Content-Type")}
	cl := []string{strconv.Itoa(len(body))}
	nosniff := []string{"nosniff"}
	etag := resp.Header.Get("ETag")
	tag := []string{etag}
	ce := []string{resp.Header.Get("Content-Encoding")}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		if etag != "" {
			hd["Etag"] = tag
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		if ce[0] != "" {
			hd["Content-Encoding"] = ce
		}
		hd["Content-Type"] = ct
		hd["X-Content-Type-Options"] = nosniff
		hd["Content-Length"] = cl
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareserve:", err)
		os.Exit(1)
	}
	fmt.Printf("bareserve: serving %d bytes on http://%s/\n", len(body), ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "bareserve:", err)
		os.Exit(1)
	}
}
