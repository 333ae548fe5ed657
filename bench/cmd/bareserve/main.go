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
// With -from-list FILE instead (a loopback URL a line), it fetches every
// one and answers each request with the bytes of its path (404 for a
// path it does not have): the floor of loads spread over many skills,
// whose bodies are as many and as large as the server's, so that the
// floor meets the same cache misses (one body served for every path,
// before, sat in the processor's caches while loadout's 10,000 did not).
//
// It does what any handler must (find the body, set the headers, write
// it) and nothing else, so loadout's cached load route divided by it is
// the share of the machine's HTTP capacity the route reaches
// (bench/server.sh).
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
	list := flag.String("from-list", "", "fetch every URL of this file (one a line, loopback) and serve each by its path")
	flag.Parse()
	var urls []string
	switch {
	case *from != "" && *list == "":
		urls = []string{*from}
	case *from == "" && *list != "":
		data, err := os.ReadFile(*list)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bareserve:", err)
			os.Exit(2)
		}
		urls = strings.Fields(string(data))
	}
	if len(urls) == 0 {
		fmt.Fprintln(os.Stderr, "bareserve: give -from http://127.x.x.x:PORT/PATH or -from-list FILE of such URLs (loopback only)")
		os.Exit(2)
	}
	// A transport that never asks for compression by itself: the bytes
	// kept are the ones the headers asked for.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	bodies := make(map[string]*answer, len(urls))
	var one *answer
	total := 0
	for _, u := range urls {
		a, path, err := fetch(client, u, *token, headers)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bareserve:", err)
			os.Exit(1)
		}
		bodies[path], one = a, a
		total += len(a.body)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := one // -from: the one body, whatever the path
		if len(urls) > 1 || *list != "" {
			if a = bodies[r.URL.Path]; a == nil {
				w.WriteHeader(http.StatusNotFound)
				return
			}
		}
		a.serve(w, r)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bareserve:", err)
		os.Exit(1)
	}
	fmt.Printf("bareserve: serving %d bytes (%d bodies) on http://%s/\n", total/len(urls), len(urls), ln.Addr())
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "bareserve:", err)
		os.Exit(1)
	}
}

// answer is one body with its headers, each value encoded once.
type answer struct {
	body            []byte
	etag            string
	ct, cl, tag, ce []string
}

var nosniff = []string{"nosniff"}

func fetch(client *http.Client, u, token string, headers hdrflag.Flags) (*answer, string, error) {
	if !strings.HasPrefix(u, "http://127.") {
		return nil, "", fmt.Errorf("%s: loopback URLs only", u)
	}
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		req.Header.Add(h[0], h[1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("GET %s: status %d, %v", u, resp.StatusCode, err)
	}
	etag := resp.Header.Get("ETag")
	return &answer{body: body, etag: etag, ct: []string{resp.Header.Get("Content-Type")}, cl: []string{strconv.Itoa(len(body))},
		tag: []string{etag}, ce: []string{resp.Header.Get("Content-Encoding")}}, req.URL.Path, nil
}

func (a *answer) serve(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	if a.etag != "" {
		hd["Etag"] = a.tag
		if r.Header.Get("If-None-Match") == a.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	if a.ce[0] != "" {
		hd["Content-Encoding"] = a.ce
	}
	hd["Content-Type"] = a.ct
	hd["X-Content-Type-Options"] = nosniff
	hd["Content-Length"] = a.cl
	w.WriteHeader(http.StatusOK)
	w.Write(a.body)
}
