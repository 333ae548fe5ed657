package webui_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/loadout/loadout/internal/browsertest"
)

// Page weight: every page the crawl reaches, loaded cold (the browser's
// cache off) in Chromium, with the bytes that came over the wire summed
// from the DevTools Network events (encodedDataLength: headers and the
// body after compression) of every response the page needed.

// pageBudget is the page budget: every page under 300 KB transferred,
// the editor bundle included, compressed.
const pageBudget = 300 << 10

// pageWeight is what one page cost to load.
type pageWeight struct {
	Page      string
	Bytes     int64
	Responses int
	// Uncompressed lists the text responses (HTML, CSS, JS, JSON, SVG)
	// over 1 KB that came without a Content-Encoding.
	Uncompressed []string
}

// netLog collects a tab's responses and finished loads.
type netLog struct {
	mu   sync.Mutex
	resp map[network.RequestID]*network.Response
	done map[network.RequestID]float64
}

func (n *netLog) reset() {
	n.mu.Lock()
	n.resp, n.done = map[network.RequestID]*network.Response{}, map[network.RequestID]float64{}
	n.mu.Unlock()
}

// measureWeights crawls the UI of the server at base as the accessibility
// check does and returns each page's weight.
func measureWeights(t testing.TB, ctx context.Context, base string) []pageWeight {
	t.Helper()
	n := &netLog{}
	n.reset()
	if err := chromedp.Listen(ctx, func(ev any) {
		n.mu.Lock()
		defer n.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			n.resp[e.RequestID] = e.Response
		case *network.EventLoadingFinished:
			n.done[e.RequestID] = e.EncodedDataLength
		}
	}); err != nil {
		t.Fatal(err)
	}
	browsertest.Do(t, ctx, "network on, cache off", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	}))
	var out []pageWeight
	n.reset()
	crawl(t, ctx, base, func(page string) {
		n.mu.Lock()
		w := pageWeight{Page: strings.TrimPrefix(page, strings.TrimSuffix(base, "/ui/"))}
		for id, size := range n.done {
			w.Bytes += int64(size)
			w.Responses++
			r := n.resp[id]
			if r == nil {
				continue
			}
			if textMime(r.MimeType) && size > 1024 && netHeader(r.Headers, "Content-Encoding") == "" {
				w.Uncompressed = append(w.Uncompressed, fmt.Sprintf("%s (%s, %.0f bytes)", r.URL, r.MimeType, size))
			}
		}
		n.mu.Unlock()
		out = append(out, w)
		n.reset()
	})
	return out
}

func textMime(mime string) bool {
	switch mime {
	case "text/html", "text/css", "text/javascript", "application/javascript", "application/json", "image/svg+xml":
		return true
	}
	return false
}

func netHeader(h network.Headers, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// weightTable is the figures as a table, heaviest first.
func weightTable(ws []pageWeight) string {
	ws = append([]pageWeight(nil), ws...)
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Bytes > ws[j].Bytes })
	var b strings.Builder
	fmt.Fprintf(&b, "%-55s %10s %9s\n", "page", "KB", "responses")
	for _, w := range ws {
		fmt.Fprintf(&b, "%-55s %10.1f %9d\n", w.Page, float64(w.Bytes)/1024, w.Responses)
	}
	return b.String()
}

// TestPageWeight: every page the crawl reaches loads, cold, within the
// 300 KB budget, and its text responses come compressed.
func TestPageWeight(t *testing.T) {
	ctx := browsertest.Browser(t, 1280, 800)
	srv := newCatalog(t).serve(t)
	ws := measureWeights(t, ctx, srv.URL+"/ui/")
	t.Logf("page weight, loaded cold:\n%s", weightTable(ws))
	if len(ws) == 0 {
		t.Fatal("no page measured")
	}
	for _, w := range ws {
		if w.Bytes > pageBudget {
			t.Errorf("%s: %d bytes transferred, over the budget of %d", w.Page, w.Bytes, pageBudget)
		}
		if w.Bytes == 0 {
			t.Errorf("%s: no bytes counted: the Network events did not arrive", w.Page)
		}
		for _, u := range w.Uncompressed {
			t.Errorf("%s: a text response came uncompressed: %s", w.Page, u)
		}
	}
}
